import Foundation

/// What makes an event the correction of one already sent (`correction` in an event). The
/// event is the original with its new text: it goes to exactly the devices the original
/// reached (read from the original's delivery records, less those whose receipt says it was
/// never sent), under an id of its own (``DerivedSend/correction``), and carries the original's
/// replace key (``NotificationEvent/replaceKey``) in every platform's replace header, so the new
/// text takes the old one's place on the lock screen instead of buzzing a second time.
public struct EventCorrection: Sendable, Hashable {
    /// Instead of new text, a silent push telling the app to remove the alert
    /// (``withdrawalPayload(platform:replaceKey:)``).
    public var withdraw: Bool
    /// Who corrected it (the API fills in the access policy's name when the body has none).
    public var by: String?
    /// Why, in the editor's words.
    public var reason: String?
    /// What the correction changed, for the audit: `properties.<name>` and `native.<platform>`
    /// of every value that differs from the original's (empty for a withdrawal).
    public var changed: [String]

    public init(withdraw: Bool = false, by: String? = nil, reason: String? = nil, changed: [String] = []) {
        self.changed = changed
        self.withdraw = withdraw
        self.by = by
        self.reason = reason
    }

    /// The longest `by` and `reason`, in UTF-8 bytes.
    public static let maxTextBytes = 500

    static let members: Set<String> = ["withdraw", "by", "reason", "changed"]

    /// The member as an event carries it.
    public var jsonValue: JSONValue {
        var members: [JSONMember] = []
        if withdraw { members.append(JSONMember(key: "withdraw", value: .bool(true))) }
        if let by { members.append(JSONMember(key: "by", value: .string(by))) }
        if let reason { members.append(JSONMember(key: "reason", value: .string(reason))) }
        if !changed.isEmpty { members.append(JSONMember(key: "changed", value: .array(changed.map(JSONValue.string)))) }
        return .object(members)
    }

    /// Reads and checks the `correction` member; nil when absent or unusable (issues recorded).
    static func read(_ parent: JSONFieldReader, issues: inout [ValidationIssue]) -> EventCorrection? {
        guard let reader = parent.object("correction", required: false, issues: &issues) else { return nil }
        reader.refuseUnknownMembers(known: members, issues: &issues)
        var withdraw = false
        if let value = reader.member("withdraw") {
            if case .bool(let flag) = value {
                withdraw = flag
            } else {
                issues.append(JSONFieldReader.wrongType(reader.fieldPath("withdraw"), expected: "true or false", found: value))
            }
        }
        func text(_ name: String) -> String? {
            guard let text = reader.string(name, required: false, issues: &issues) else { return nil }
            if text.utf8.count > maxTextBytes {
                issues.append(
                    ValidationIssue(
                        field: reader.fieldPath(name), code: ValidationIssue.Code.tooLarge,
                        message: "\(text.utf8.count) bytes; the limit is \(maxTextBytes)"))
            } else if text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
                issues.append(
                    ValidationIssue(
                        field: reader.fieldPath(name), code: ValidationIssue.Code.invalidValue,
                        message: "control characters are not allowed"))
            }
            return text
        }
        let by = text("by")
        let reason = text("reason")
        let changed = reader.stringArray("changed", required: false, issues: &issues) ?? []
        return EventCorrection(withdraw: withdraw, by: by, reason: reason, changed: changed)
    }

    /// The silent push of a withdrawal on `platform`: no alert, only the replace key of the
    /// notification to remove, under `herald.withdraw` (the app removes the delivered
    /// notification whose identifier or tag is that key). APNs: a background push; FCM: a
    /// data message; Web Push: a message the service worker reads (it closes the notification
    /// whose `tag` is the key); WNS: a raw notification.
    public static func withdrawalPayload(platform: Platform, replaceKey: String) -> [UInt8] {
        let marker = JSONValue.object([JSONMember(key: "withdraw", value: .string(replaceKey))])
        let payload: JSONValue
        switch platform {
        case .apns:
            payload = .object([
                JSONMember(key: "aps", value: .object([JSONMember(key: "content-available", value: .number("1"))])),
                JSONMember(key: "herald", value: marker),
            ])
        case .fcm:
            payload = .object([
                JSONMember(
                    key: "message",
                    value: .object([
                        JSONMember(key: "data", value: .object([JSONMember(key: "herald_withdraw", value: .string(replaceKey))]))
                    ]))
            ])
        case .wns, .webpush:
            payload = .object([JSONMember(key: "herald", value: marker)])
        }
        var bytes: [UInt8] = []
        payload.write(into: &bytes)
        return bytes
    }

    /// The header templates that make a withdrawal silent on `platform` (the event's replace
    /// key still goes in the replace header).
    public static func withdrawalHeaders(platform: Platform) -> [String: String] {
        switch platform {
        case .apns: ["apns-push-type": "background"]
        case .wns: ["X-WNS-Type": "wns/raw"]
        case .fcm, .webpush: [:]
        }
    }
}

/// The body of `POST /v1/notifications/{id}/corrections` (and `herald correct`): the new text,
/// or a withdrawal, and who corrects and why.
public struct CorrectionRequest: Sendable, Hashable {
    /// Properties that replace the original's of the same name (the others stay).
    public var properties: [String: String]
    /// Native payloads that replace the original's for their platforms.
    public var native: [Platform: String]
    public var withdraw: Bool
    public var by: String?
    public var reason: String?

    public init(
        properties: [String: String] = [:], native: [Platform: String] = [:], withdraw: Bool = false, by: String? = nil,
        reason: String? = nil
    ) {
        self.properties = properties
        self.native = native
        self.withdraw = withdraw
        self.by = by
        self.reason = reason
    }

    static let members: Set<String> = ["properties", "native", "withdraw", "by", "reason"]

    /// Reads and checks a request body: new text or a withdrawal, not both and not neither.
    public static func decode(_ bytes: some Collection<UInt8>, limits: EventLimits = .default) throws(ValidationFailure)
        -> CorrectionRequest
    {
        let root: JSONValue
        switch JSONFieldReader.parseObject(bytes, maximumBytes: limits.maxBytes, what: "the correction") {
        case .success(let value): root = value
        case .failure(let failure): throw failure
        }
        var issues: [ValidationIssue] = []
        let reader = JSONFieldReader(root)
        reader.refuseUnknownMembers(known: members, issues: &issues)
        let properties = NotificationEvent.readProperties(reader.member("properties"), limits: limits, issues: &issues)
        let native = NotificationEvent.readNative(reader.member("native"), payloadLimits: limits.payloadLimits, issues: &issues)
        // `withdraw`, `by` and `reason` read as the event's `correction` member reads them.
        var shared: [JSONMember] = []
        if case .object(let all) = root {
            shared = all.filter { EventCorrection.members.contains($0.key) && $0.key != "changed" }
        }
        let wrapper = JSONFieldReader(.object([JSONMember(key: "correction", value: .object(shared))]))
        let correction = EventCorrection.read(wrapper, issues: &issues) ?? EventCorrection()
        let hasText = !properties.isEmpty || !native.isEmpty
        if correction.withdraw && hasText {
            issues.append(
                ValidationIssue(
                    field: "withdraw", code: ValidationIssue.Code.invalidValue,
                    message: "a withdrawal removes the alert and carries no new text: send either withdraw or properties/native"))
        } else if !correction.withdraw && !hasText && issues.isEmpty {
            issues.append(
                ValidationIssue(
                    field: "properties", code: ValidationIssue.Code.invalidValue,
                    message: "nothing to correct: give the new properties or native payloads, or \"withdraw\": true"))
        }
        guard issues.isEmpty else { throw ValidationFailure(issues: issues) }
        return CorrectionRequest(
            properties: properties, native: native, withdraw: correction.withdraw, by: correction.by, reason: correction.reason)
    }

    /// The correction of `original` (an event as it was published, with its id): the same
    /// event with the new properties and native payloads over the old ones, breaking (it goes
    /// first), published now, and `correction` saying who and why (`by` defaults to `caller`).
    /// An expiry already past is dropped: the wrong alert is still on the lock screens.
    public func correction(of original: NotificationEvent, caller: String?, now: Date) -> NotificationEvent {
        var event = original
        event.properties.merge(properties) { _, new in new }
        event.native.merge(native) { _, new in new }
        event.schedule = nil
        event.testRecipients = nil
        event.urgency = .breaking
        event.publishedAt = now
        if let expiresAt = event.expiresAt, expiresAt <= now { event.expiresAt = nil }
        var changed = properties.filter { original.properties[$0.key] != $0.value }.map { "properties.\($0.key)" }
        changed += native.filter { original.native[$0.key] != $0.value }.map { "native.\($0.key.rawValue)" }
        event.correction = EventCorrection(withdraw: withdraw, by: by ?? caller, reason: reason, changed: withdraw ? [] : changed.sorted())
        return event
    }
}
