import Foundation

/// One recipient of a test send (`testRecipients`): the real event, rendered as it would be,
/// goes to these devices only, so an editor sees it on their own phone before the real send.
public enum TestRecipient: Sendable, Hashable {
    /// A registration id, or an installation id (every registration of the installation):
    /// both are looked up.
    case device(String)
    /// `$UserId:<id>`: every registration filed under the tag `$UserId:{<id>}`.
    case user(String)

    /// At most this many recipients per test send.
    public static let maxCount = 100
    static let userPrefix = "$UserId:"

    /// The recipient as written in `testRecipients`.
    public var text: String {
        switch self {
        case .device(let id): id
        case .user(let id): Self.userPrefix + id
        }
    }

    /// The tag that files the recipient's registrations: `$InstallationId:{<id>}` for a
    /// device id (empty when it is not an installation), `$UserId:{<id>}` for a user.
    public var tag: String {
        switch self {
        case .device(let id): "$InstallationId:{\(id)}"
        case .user(let id): "$UserId:{\(id)}"
        }
    }

    /// Reads one entry of `testRecipients`; the problem in words when it is none.
    public static func parse(_ text: String) -> Result<TestRecipient, TestRecipientProblem> {
        if text.hasPrefix(userPrefix) {
            let id = String(text.dropFirst(userPrefix.count))
            guard !id.isEmpty else { return .failure(TestRecipientProblem("a user id cannot be empty (\(userPrefix)<id>)")) }
            let recipient = TestRecipient.user(id)
            if let problem = TagRules.problem(with: recipient.tag) {
                return .failure(TestRecipientProblem("user id cannot form the tag \(recipient.tag): \(problem)"))
            }
            return .success(recipient)
        }
        if let problem = IdentifierRules.registrationIdProblem(text) {
            return .failure(
                TestRecipientProblem("expected a registration id, an installation id or \(userPrefix)<user id>: \(problem)"))
        }
        return .success(.device(text))
    }
}

/// Why an entry of `testRecipients` is not a recipient.
public struct TestRecipientProblem: Error, Sendable {
    public var message: String
    init(_ message: String) { self.message = message }
}

/// The sends made from an event without taking its id, each under an id of its own:
/// `<event id>~<kind>-<partition>-<offset>`, from its record's place on `herald.events`. `~` is
/// in no event id, so neither takes the event's own id (nor another's), and each new one gets a
/// new id.
public enum DerivedSend: String, Sendable, Hashable, CaseIterable {
    /// `testRecipients`: the event to a few named devices.
    case test
    /// `dryRun`: the event planned and resolved against every registration, counted and
    /// rendered once per template, delivered to none.
    case rehearsal
    /// `correction`: new text (or a withdrawal) to the devices the event reached.
    case correction

    public func eventId(of id: String, partition: Int32, offset: Int64) -> String {
        "\(id)~\(rawValue)-\(partition)-\(offset)"
    }

    /// The event id and kind a derived send's id was made from; nil for any other id.
    public static func parse(_ id: String) -> (eventId: String, kind: DerivedSend)? {
        guard let marker = id.range(of: "~", options: .backwards) else { return nil }
        let eventId = String(id[..<marker.lowerBound])
        let parts = id[marker.upperBound...].split(separator: "-", omittingEmptySubsequences: false)
        guard IdentifierRules.eventIdProblem(eventId) == nil, parts.count == 3, let kind = DerivedSend(rawValue: String(parts[0])),
            Int32(parts[1]) != nil, Int64(parts[2]) != nil
        else { return nil }
        return (eventId, kind)
    }
}
