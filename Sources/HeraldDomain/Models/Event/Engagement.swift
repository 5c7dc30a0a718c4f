import Foundation

/// What a reader did with an alert, as the app reports it (`POST /v1/notifications/{id}/engagements`):
/// opened it or dismissed it, on one device. The value of `herald.engagements` (compacted; key:
/// ``recordKey``), so each device's engagement with an alert is counted once, however often the
/// app reports it.
public struct Engagement: Sendable, Hashable {
    public enum Action: String, Sendable, Hashable, CaseIterable, Codable {
        case opened, dismissed
    }

    /// The device, as the app knows itself.
    public enum Device: Sendable, Hashable {
        case registration(String)
        case installation(String)

        public var id: String {
            switch self {
            case .registration(let id), .installation(let id): id
            }
        }

        var member: String {
            switch self {
            case .registration: "registrationId"
            case .installation: "installationId"
            }
        }
    }

    public var hub: HubName
    public var eventId: String
    public var action: Action
    public var device: Device
    /// When the reader acted (the app's clock, else the API's).
    public var at: Date
    /// The device's platform and template, looked up by the API: what the funnel is counted by.
    public var platform: Platform?
    public var template: String?

    public init(
        hub: HubName = .default, eventId: String, action: Action, device: Device, at: Date, platform: Platform? = nil,
        template: String? = nil
    ) {
        self.hub = hub
        self.eventId = eventId
        self.action = action
        self.device = device
        self.at = at
        self.platform = platform
        self.template = template
    }

    /// `<hub>/<event>/<device>/<action>` (the hub part only outside the default hub): one record
    /// per device and action once compacted.
    public var recordKey: String { hub.recordKey("\(eventId)/\(device.id)/\(action.rawValue)") }

    /// How far the reader's clock may be ahead of the API's.
    public static let clockTolerance: TimeInterval = 300

    /// Reads a request body: `action` (`opened` or `dismissed`), one of `registrationId` and
    /// `installationId`, and optionally `at`, never more than ``clockTolerance`` ahead of `now`.
    public static func decodeRequest(_ bytes: some Collection<UInt8>, eventId: String, hub: HubName, now: Date)
        throws(ValidationFailure) -> Engagement
    {
        let root: JSONValue
        switch JSONFieldReader.parseObject(bytes, maximumBytes: 4_096, what: "the engagement") {
        case .success(let value): root = value
        case .failure(let failure): throw failure
        }
        var issues: [ValidationIssue] = []
        let reader = JSONFieldReader(root)
        reader.refuseUnknownMembers(known: ["action", "registrationId", "installationId", "at"], issues: &issues)
        let action: Action? = reader.choice("action", issues: &issues)
        if reader.member("action") == nil { issues.append(JSONFieldReader.missing("action", expected: "opened or dismissed")) }
        let registration = reader.string("registrationId", required: false, issues: &issues)
        let installation = reader.string("installationId", required: false, issues: &issues)
        var device: Device?
        switch (registration, installation) {
        case (let id?, nil): device = .registration(id)
        case (nil, let id?): device = .installation(id)
        case (nil, nil):
            issues.append(JSONFieldReader.missing("registrationId", expected: "the device's registrationId or installationId"))
        case (_?, _?):
            issues.append(
                ValidationIssue(
                    field: "installationId", code: ValidationIssue.Code.invalidValue,
                    message: "name the device once: registrationId or installationId, not both"))
        }
        if let device {
            let problem =
                switch device {
                case .registration(let id): IdentifierRules.registrationIdProblem(id)
                case .installation(let id): IdentifierRules.installationIdProblem(id)
                }
            if let problem {
                issues.append(ValidationIssue(field: device.member, code: ValidationIssue.Code.invalidIdentifier, message: problem))
            }
        }
        let at = reader.timestamp("at", issues: &issues)
        if let at, at.timeIntervalSince(now) > clockTolerance {
            issues.append(
                ValidationIssue(
                    field: "at", code: ValidationIssue.Code.invalidTimestamp,
                    message: "is more than \(Int(clockTolerance)) s ahead of the server's clock"))
        }
        guard issues.isEmpty, let action, let device else { throw ValidationFailure(issues: issues) }
        return Engagement(hub: hub, eventId: eventId, action: action, device: device, at: at ?? now)
    }

    /// The `herald.engagements` record.
    public func jsonBytes() -> [UInt8] {
        var members: [JSONMember] = []
        if !hub.isDefault { members.append(JSONMember(key: "hub", value: .string(hub.rawValue))) }
        members += [
            JSONMember(key: "eventId", value: .string(eventId)),
            JSONMember(key: "action", value: .string(action.rawValue)),
            JSONMember(key: device.member, value: .string(device.id)),
        ]
        if let platform { members.append(JSONMember(key: "platform", value: .string(platform.rawValue))) }
        if let template { members.append(JSONMember(key: "template", value: .string(template))) }
        members.append(JSONMember(key: "at", value: .string(ISO8601Timestamp.format(at, precision: .milliseconds))))
        var bytes: [UInt8] = []
        JSONValue.object(members).write(into: &bytes)
        return bytes
    }

    /// Reads a `herald.engagements` record.
    public static func decodeRecord(_ bytes: some Collection<UInt8>) throws(ValidationFailure) -> Engagement {
        let root: JSONValue
        switch JSONFieldReader.parseObject(bytes, maximumBytes: .max, what: "the engagement record") {
        case .success(let value): root = value
        case .failure(let failure): throw failure
        }
        var issues: [ValidationIssue] = []
        let reader = JSONFieldReader(root)
        let hub = reader.hub(issues: &issues)
        let eventId = reader.string("eventId", required: true, issues: &issues)
        let action: Action? = reader.choice("action", issues: &issues)
        let registration = reader.string("registrationId", required: false, issues: &issues)
        let installation = reader.string("installationId", required: false, issues: &issues)
        let platform = reader.member("platform") == nil ? nil : reader.platform("platform", issues: &issues)
        let template = reader.string("template", required: false, issues: &issues)
        let at = reader.timestamp("at", issues: &issues)
        let device = registration.map(Device.registration) ?? installation.map(Device.installation)
        guard issues.isEmpty, let eventId, let action, let device, let at else {
            if issues.isEmpty { issues.append(JSONFieldReader.missing("at", expected: "eventId, action, a device and at")) }
            throw ValidationFailure(issues: issues)
        }
        return Engagement(hub: hub, eventId: eventId, action: action, device: device, at: at, platform: platform, template: template)
    }
}

/// An alert's funnel from the readers' side: how many devices opened and dismissed it (each
/// counted once), by platform and template (a template is a language), and how long after the
/// publish they opened it. The status's `engagement` member.
public struct EngagementFunnel: Sendable, Hashable, Codable {
    public var opened: Int
    public var dismissed: Int
    /// `opened` over the receipts `sent`, when any were.
    public var openRate: Double?
    public var openedByPlatform: [String: Int]
    public var openedByTemplate: [String: Int]
    /// The median time from the publish to an open, in ms (10 ms steps).
    public var medianTimeToOpenMs: Int64?

    public init(
        opened: Int = 0, dismissed: Int = 0, openRate: Double? = nil, openedByPlatform: [String: Int] = [:],
        openedByTemplate: [String: Int] = [:], medianTimeToOpenMs: Int64? = nil
    ) {
        self.opened = opened
        self.dismissed = dismissed
        self.openRate = openRate
        self.openedByPlatform = openedByPlatform
        self.openedByTemplate = openedByTemplate
        self.medianTimeToOpenMs = medianTimeToOpenMs
    }

    /// The fields the API counts an engagement under in the event's engagement hash (once per
    /// device and action): the action, by platform and template, and (an open) its time from
    /// the publish in 10 ms steps.
    public static func fields(of engagement: Engagement, publishedAt: Date?) -> [String] {
        let action = engagement.action.rawValue
        var fields = [action]
        if let platform = engagement.platform { fields.append("\(action):p:\(platform.rawValue)") }
        if let template = engagement.template { fields.append("\(action):t:\(template)") }
        if engagement.action == .opened, let publishedAt {
            let elapsed = max(0, ISO8601Timestamp.milliseconds(engagement.at) - ISO8601Timestamp.milliseconds(publishedAt))
            fields.append("opened@\(elapsed / 10 * 10)")
        }
        return fields
    }

    /// The funnel of those counts; nil when nothing was reported.
    public init?(fields: [String: Int], sent: Int) {
        guard !fields.isEmpty else { return nil }
        self.init(opened: fields["opened"] ?? 0, dismissed: fields["dismissed"] ?? 0)
        var times: [(Int64, Int)] = []
        for (field, count) in fields {
            if field.hasPrefix("opened:p:") {
                openedByPlatform[String(field.dropFirst(9))] = count
            } else if field.hasPrefix("opened:t:") {
                openedByTemplate[String(field.dropFirst(9))] = count
            } else if field.hasPrefix("opened@"), let elapsed = Int64(field.dropFirst(7)) {
                times.append((elapsed, count))
            }
        }
        if sent > 0 { openRate = Double(opened) / Double(sent) }
        medianTimeToOpenMs = Self.median(times)
    }

    /// The median of counted values (the lower middle one of an even count).
    public static func median(_ values: [(Int64, Int)]) -> Int64? {
        let total = values.reduce(0) { $0 + $1.1 }
        guard total > 0 else { return nil }
        var seen = 0
        for (value, count) in values.sorted(by: { $0.0 < $1.0 }) {
            seen += count
            if seen * 2 >= total { return value }
        }
        return nil
    }
}
