/// The name of a hub: one app's registrations, installations, events, statuses and
/// credentials inside a Herald deployment (a namespace of hubs, as in Azure Notification Hubs).
///
/// Names follow Azure's rules for notification hub names (1 to 260 characters: letters,
/// digits, `.`, `-` and `_`, starting and ending with a letter or digit) and, like Azure's,
/// are case-insensitive: a name is kept in lower case, so `News` and `news` are one hub.
/// The ``default`` hub holds everything that names no hub; its records carry no `hub` member
/// and its keys and topic keys are those of a single-hub deployment, so a deployment from
/// before hubs is the default hub as it stands.
public struct HubName: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let rawValue: String

    public static let maxLength = 260
    /// The hub of records that name none.
    public static let `default` = HubName(unchecked: "default")

    /// Validates and lower-cases `text`; nil when it is not a hub name (``problem(_:)`` says why).
    public init?(_ text: String) {
        guard HubName.problem(text) == nil else { return nil }
        self.rawValue = text.lowercased()
    }

    private init(unchecked rawValue: String) { self.rawValue = rawValue }

    public var isDefault: Bool { self == .default }
    public var description: String { rawValue }
    public static func < (lhs: HubName, rhs: HubName) -> Bool { lhs.rawValue < rhs.rawValue }

    /// Why `text` is not a hub name, or nil when it is one.
    public static func problem(_ text: String) -> String? {
        let bytes = Array(text.utf8)
        if bytes.isEmpty { return "a hub name cannot be empty" }
        if bytes.count > maxLength { return "a hub name is at most \(maxLength) characters; this one has \(bytes.count)" }
        func isAlphanumeric(_ byte: UInt8) -> Bool {
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
        }
        for (position, byte) in bytes.enumerated()
        where !isAlphanumeric(byte) && byte != UInt8(ascii: ".") && byte != UInt8(ascii: "-") && byte != UInt8(ascii: "_") {
            return
                "a hub name uses letters, digits and '.' '-' '_'; found \(Platform.describe(text, at: position)) at position \(position + 1)"
        }
        if !isAlphanumeric(bytes[0]) || !isAlphanumeric(bytes[bytes.count - 1]) {
            return "a hub name starts and ends with a letter or digit"
        }
        if reserved.contains(text.lowercased()) {
            return "\"\(text)\" is the first segment of Herald's own routes, so no hub may take it"
        }
        return nil
    }

    /// Names Herald's own routes start with (`/v1`, `/health`, `/metrics`, `/openapi.yaml`):
    /// a hub's Azure routes (`/{hub}/messages`) would be hidden behind them.
    public static let reserved: Set<String> = ["v1", "health", "metrics", "openapi.yaml"]

    /// The key of a record of this hub on a topic keyed by `id` (registrations, events,
    /// statuses): `id` itself for the default hub, `<hub>/<id>` for the others. No id contains
    /// `/` (``IdentifierRules``), so the key names its hub and its id unambiguously.
    public func recordKey(_ id: String) -> String { isDefault ? id : rawValue + "/" + id }

    /// Splits a record key made by ``recordKey(_:)``; nil when the hub part is not a hub name.
    public static func split(recordKey key: String) -> (hub: HubName, id: String)? {
        guard let slash = key.firstIndex(of: "/") else { return (.default, key) }
        guard let hub = HubName(String(key[..<slash])) else { return nil }
        return (hub, String(key[key.index(after: slash)...]))
    }
}

extension HubName: Codable {
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let name = HubName(text) else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(codingPath: decoder.codingPath, debugDescription: HubName.problem(text) ?? "not a hub name"))
        }
        self = name
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

extension JSONFieldReader {
    /// Reads an optional `hub` member: absent means the default hub.
    func hub(_ key: String = "hub", issues: inout [ValidationIssue]) -> HubName {
        guard let text = string(key, required: false, issues: &issues) else { return .default }
        guard let name = HubName(text) else {
            issues.append(
                ValidationIssue(
                    field: key, code: ValidationIssue.Code.invalidIdentifier, message: HubName.problem(text) ?? "not a hub name"))
            return .default
        }
        return name
    }
}

extension JSONFieldReader {
    /// Checks an optional `hub` member of a document sent to `hub`'s route: it may repeat the
    /// route's hub (as a GET returned it) but never name another.
    func requireHub(_ hub: HubName, issues: inout [ValidationIssue]) {
        let named = self.hub(issues: &issues)
        if member("hub") != nil, named != hub {
            issues.append(
                ValidationIssue(
                    field: "hub", code: ValidationIssue.Code.invalidValue,
                    message: "the body names hub \"\(named)\" but the request is for hub \"\(hub)\""))
        }
    }
}
