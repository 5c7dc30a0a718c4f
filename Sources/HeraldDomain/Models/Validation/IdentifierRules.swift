/// The alphabets and lengths of Herald's identifiers. They travel inside
/// `deliveryId` (`<eventId>/<registrationId>/<template>`), Redis keys and URLs, so none
/// of them may contain `/`, whitespace or braces.
public enum IdentifierRules {
    /// Event ids: letters, digits and `- _ . : @ #`, 1 to 128 characters.
    public static let maxEventIdLength = 128
    /// Registration ids: letters, digits and `- _ . : @`, 1 to 200 characters. `:` is
    /// allowed because installation templates expand to `<installationId>:<templateName>`.
    public static let maxRegistrationIdLength = 200
    /// Installation ids: letters, digits and `- _ . @`, 1 to 128 characters (no `:`, which
    /// separates the installation from the template in expanded registration ids).
    public static let maxInstallationIdLength = 128
    /// Template names: letters, digits and `- _ .`, 1 to 64 characters. Names starting with
    /// `$` are reserved (see ``DeliveryRecord/nativeTemplateName``).
    public static let maxTemplateNameLength = 64

    public static func eventIdProblem(_ id: String) -> String? {
        problem(id, what: "an event id", maxLength: maxEventIdLength, extra: "-_.:@#")
    }

    public static func registrationIdProblem(_ id: String) -> String? {
        problem(id, what: "a registration id", maxLength: maxRegistrationIdLength, extra: "-_.:@")
    }

    public static func installationIdProblem(_ id: String) -> String? {
        problem(id, what: "an installation id", maxLength: maxInstallationIdLength, extra: "-_.@")
    }

    public static func templateNameProblem(_ name: String) -> String? {
        problem(name, what: "a template name", maxLength: maxTemplateNameLength, extra: "-_.")
    }

    static func problem(_ text: String, what: String, maxLength: Int, extra: String) -> String? {
        let bytes = Array(text.utf8)
        if bytes.isEmpty { return "\(what) cannot be empty" }
        if bytes.count > maxLength { return "\(what) is at most \(maxLength) characters; this one has \(bytes.count)" }
        let allowed = Set(extra.utf8)
        for (position, byte) in bytes.enumerated() {
            let isAlphanumeric =
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            if !isAlphanumeric && !allowed.contains(byte) {
                let shown = extra.map { "'\($0)'" }.joined(separator: " ")
                return
                    "\(what) uses letters, digits and \(shown); found \(Platform.describe(text, at: position)) at position \(position + 1)"
            }
        }
        return nil
    }
}
