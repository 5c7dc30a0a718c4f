import HeraldDomain

/// Puts a validated event on `herald.events`.
public protocol NotificationPublishing: Sendable {
    /// Publishes `event`, whose JSON encoding is `body`, and returns the event id once the
    /// log has it. Throws ``EventIdConflict`` when the id was already used by an event with
    /// other content (an identical retry is accepted again).
    func publish(_ event: NotificationEvent, body: [UInt8]) async throws -> String
}

/// An event id already taken by an event with other content: 409, with its location.
public struct EventIdConflict: Error, Sendable {
    public var eventId: String

    public init(eventId: String) {
        self.eventId = eventId
    }
}
