import Foundation

/// Which APNs token a registration holds: a device's (alerts, the default), one Live Activity's
/// (updates and the end of that activity), or an app's push-to-start token (starts a new
/// activity). A Live Activity registration is tagged like any other, so "update every Live
/// Activity following this match" is a tag expression.
public enum APNsTokenKind: String, Sendable, Hashable, CaseIterable {
    case device
    case liveActivity
    case pushToStart

    /// The name a Live Activity registration's deliveries carry as their template (names
    /// starting with `$` are never a template's), and its fan-out view's template key.
    public var deliveryTemplateName: String? {
        switch self {
        case .device: nil
        case .liveActivity: "$liveActivity"
        case .pushToStart: "$pushToStart"
        }
    }

    public init?(deliveryTemplateName name: String) {
        guard let kind = Self.allCases.first(where: { $0.deliveryTemplateName == name }) else { return nil }
        self = kind
    }
}

/// What an event tells Live Activities (`liveActivity` in an event): APNs's `liveactivity`
/// push, built by Herald from these members rather than from a registration's template.
/// `update` and `end` go to Live Activity tokens, `start` to push-to-start tokens.
public struct LiveActivityUpdate: Sendable, Hashable {
    public enum Event: String, Sendable, Hashable, CaseIterable {
        case start, update, end
    }

    public var event: Event
    /// The activity's new `ContentState` (a JSON object the app decodes).
    public var contentState: JSONValue
    /// When the system marks the activity stale if no update came.
    public var staleDate: Date?
    /// With `end`: when the ended activity leaves the lock screen.
    public var dismissalDate: Date?
    /// With `start`: the app's `ActivityAttributes` type name and its attributes.
    public var attributesType: String?
    public var attributes: JSONValue?
    /// An alert to show with the update (required for `start`): `{"title": …, "body": …, "sound": …}`.
    public var alert: JSONValue?
    /// Which of the app's activities the system shows first (a number, kept as its JSON text).
    public var relevanceScore: String?

    public init(
        event: Event, contentState: JSONValue, staleDate: Date? = nil, dismissalDate: Date? = nil, attributesType: String? = nil,
        attributes: JSONValue? = nil, alert: JSONValue? = nil, relevanceScore: String? = nil
    ) {
        self.event = event
        self.contentState = contentState
        self.staleDate = staleDate
        self.dismissalDate = dismissalDate
        self.attributesType = attributesType
        self.attributes = attributes
        self.alert = alert
        self.relevanceScore = relevanceScore
    }

    /// The registrations this update goes to.
    public var tokenKind: APNsTokenKind { event == .start ? .pushToStart : .liveActivity }

    /// The APNs payload, `timestamp` the moment of the update (APNs shows only the newest).
    public func payload(timestamp: Date) -> [UInt8] {
        func seconds(_ date: Date) -> JSONValue { .number(String(Int64(date.timeIntervalSince1970.rounded(.down)))) }
        var aps: [JSONMember] = [
            JSONMember(key: "timestamp", value: seconds(timestamp)), JSONMember(key: "event", value: .string(event.rawValue)),
            JSONMember(key: "content-state", value: contentState),
        ]
        if let staleDate { aps.append(JSONMember(key: "stale-date", value: seconds(staleDate))) }
        if let dismissalDate { aps.append(JSONMember(key: "dismissal-date", value: seconds(dismissalDate))) }
        if let attributesType { aps.append(JSONMember(key: "attributes-type", value: .string(attributesType))) }
        if let attributes { aps.append(JSONMember(key: "attributes", value: attributes)) }
        if let alert { aps.append(JSONMember(key: "alert", value: alert)) }
        if let relevanceScore { aps.append(JSONMember(key: "relevance-score", value: .number(relevanceScore))) }
        var bytes: [UInt8] = []
        JSONValue.object([JSONMember(key: "aps", value: .object(aps))]).write(into: &bytes)
        return bytes
    }

    /// The member as an event carries it.
    public var jsonValue: JSONValue {
        var members: [JSONMember] = [
            JSONMember(key: "event", value: .string(event.rawValue)), JSONMember(key: "contentState", value: contentState),
        ]
        if let staleDate { members.append(JSONMember(key: "staleDate", value: .string(ISO8601Timestamp.format(staleDate)))) }
        if let dismissalDate { members.append(JSONMember(key: "dismissalDate", value: .string(ISO8601Timestamp.format(dismissalDate)))) }
        if let attributesType { members.append(JSONMember(key: "attributesType", value: .string(attributesType))) }
        if let attributes { members.append(JSONMember(key: "attributes", value: attributes)) }
        if let alert { members.append(JSONMember(key: "alert", value: alert)) }
        if let relevanceScore { members.append(JSONMember(key: "relevanceScore", value: .number(relevanceScore))) }
        return .object(members)
    }

    static let members: Set<String> = [
        "event", "contentState", "staleDate", "dismissalDate", "attributesType", "attributes", "alert", "relevanceScore",
    ]

    /// Reads and checks the `liveActivity` member; nil when absent or unusable (issues recorded).
    static func read(_ parent: JSONFieldReader, issues: inout [ValidationIssue]) -> LiveActivityUpdate? {
        guard let reader = parent.object("liveActivity", required: false, issues: &issues) else { return nil }
        reader.refuseUnknownMembers(known: members, issues: &issues)
        func invalid(_ field: String, _ message: String) {
            issues.append(ValidationIssue(field: reader.fieldPath(field), code: ValidationIssue.Code.invalidValue, message: message))
        }
        var event: Event?
        if let text = reader.string("event", required: true, issues: &issues) {
            event = Event(rawValue: text)
            if event == nil { invalid("event", "\"\(text)\" is not start, update or end") }
        }
        let contentState = reader.member("contentState")
        if contentState == nil {
            issues.append(JSONFieldReader.missing(reader.fieldPath("contentState"), expected: "an object"))
        } else if case .object = contentState {
        } else {
            invalid("contentState", "the content state is a JSON object (the activity's ContentState)")
        }
        let staleDate = reader.timestamp("staleDate", issues: &issues)
        let dismissalDate = reader.timestamp("dismissalDate", issues: &issues)
        let attributesType = reader.string("attributesType", required: event == .start, issues: &issues)
        let attributes = reader.object("attributes", required: event == .start, issues: &issues)?.value
        let alert = reader.object("alert", required: event == .start, issues: &issues)?.value
        var relevanceScore: String?
        if let score = reader.member("relevanceScore") {
            if case .number(let text) = score {
                relevanceScore = text
            } else {
                invalid("relevanceScore", "the relevance score is a number")
            }
        }
        if event != .start {
            if attributesType != nil { invalid("attributesType", "only a start names the attributes type") }
            if attributes != nil { invalid("attributes", "only a start carries attributes") }
        }
        if dismissalDate != nil && event != .end { invalid("dismissalDate", "only an end has a dismissal date") }
        guard let event, let contentState, case .object = contentState else { return nil }
        return LiveActivityUpdate(
            event: event, contentState: contentState, staleDate: staleDate, dismissalDate: dismissalDate, attributesType: attributesType,
            attributes: attributes, alert: alert, relevanceScore: relevanceScore)
    }
}
