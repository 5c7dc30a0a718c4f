import Foundation

/// One device of a direct send (`direct`): a push handle on a platform, sent the event's native
/// payload for that platform without any registration, as Azure Notification Hubs' direct sends
/// do for apps that keep their devices themselves. Its delivery records carry
/// `$direct:<position>` (its place in the list) where a registration id would be: no
/// registration id has a `$`, so no receipt of a direct send ever names, or removes, a
/// registration.
public struct DirectTarget: Sendable, Hashable {
    public var platform: Platform
    public var handle: String

    /// At most this many handles per direct send (Azure's direct batch send takes 1,000).
    public static let maxCount = 1_000
    static let registrationIdPrefix = "$direct:"

    public init(platform: Platform, handle: String) {
        self.platform = platform
        self.handle = handle
    }

    /// What the delivery records of the handle at `position` carry as their registration id.
    public static func registrationId(position: Int) -> String { registrationIdPrefix + String(position) }

    /// Whether `registrationId` is a direct send's stand-in rather than a registration's id.
    public static func isStandIn(_ registrationId: String) -> Bool { registrationId.hasPrefix(registrationIdPrefix) }

    var jsonValue: JSONValue {
        .object([JSONMember(key: "platform", value: .string(platform.rawValue)), JSONMember(key: "handle", value: .string(handle))])
    }
}

extension NotificationEvent {
    /// Reads `direct`: 1 to ``DirectTarget/maxCount`` `{"platform", "handle"}` objects, each
    /// handle valid for its platform and each platform with a payload in `native`; a repeated
    /// one counts once.
    static func readDirect(_ reader: JSONFieldReader, native: [Platform: String], issues: inout [ValidationIssue]) -> [DirectTarget]? {
        guard let member = reader.member("direct") else { return nil }
        guard case .array(let entries) = member else {
            issues.append(JSONFieldReader.wrongType("direct", expected: "an array of {\"platform\", \"handle\"} objects", found: member))
            return nil
        }
        if entries.isEmpty {
            issues.append(
                ValidationIssue(
                    field: "direct", code: ValidationIssue.Code.invalidValue,
                    message: "an empty list sends to no device; omit the field to send to the hub's registrations"))
            return nil
        }
        if entries.count > DirectTarget.maxCount {
            issues.append(
                ValidationIssue(
                    field: "direct", code: ValidationIssue.Code.tooLarge,
                    message: "\(entries.count) handles; a direct send takes at most \(DirectTarget.maxCount)"))
            return nil
        }
        var targets: [DirectTarget] = []
        var seen: Set<DirectTarget> = []
        for (position, entry) in entries.enumerated() {
            let field = "direct[\(position)]"
            guard case .object = entry else {
                issues.append(JSONFieldReader.wrongType(field, expected: "an object with platform and handle", found: entry))
                continue
            }
            let item = JSONFieldReader(entry, path: field)
            item.refuseUnknownMembers(known: ["platform", "handle"], issues: &issues)
            let platform = item.platform("platform", issues: &issues)
            let handle = item.string("handle", required: true, issues: &issues)
            guard let platform, let handle else { continue }
            if let issue = platform.handleIssue(handle, field: field + ".handle") {
                issues.append(issue)
                continue
            }
            if native[platform] == nil {
                issues.append(
                    ValidationIssue(
                        field: field + ".platform", code: ValidationIssue.Code.invalidValue,
                        message: "a direct send delivers native payloads, and native has none for \(platform.rawValue)"))
                continue
            }
            let target = DirectTarget(platform: platform, handle: handle)
            if seen.insert(target).inserted { targets.append(target) }
        }
        return targets
    }

    /// The issues of a direct send with members that do not apply to it: it goes to its handles
    /// alone, with native payloads, now or at one instant.
    static func directSendIssues(_ reader: JSONFieldReader) -> [ValidationIssue] {
        let reasons: [(String, String)] = [
            ("tags", "a direct send goes to its handles, not to tagged registrations: remove tags"),
            ("properties", "properties fill templates, and a direct send delivers native payloads: remove properties"),
            ("templates", "a direct send delivers native payloads, never templates: remove templates"),
            ("sendAtLocal", "a direct send has no registrations with time zones: use sendAt"),
            ("liveActivity", "Live Activity pushes go to registered activity tokens: remove direct"),
            ("testRecipients", "a test send goes to registered devices: remove direct or testRecipients"),
            ("correction", "a correction goes to the devices its original reached: remove direct"),
            ("quietHours", "quiet hours are kept by registrations, and a direct send has none: remove quietHours"),
        ]
        return reasons.compactMap { name, message in
            guard let member = reader.member(name) else { return nil }
            // The event's own JSON always writes its properties, empty for a direct send.
            if case .object(let properties) = member, properties.isEmpty, name == "properties" { return nil }
            return ValidationIssue(field: name, code: ValidationIssue.Code.invalidValue, message: message)
        }
    }
}
