import HeraldDomain

/// Puts a validated event on `herald.events`.
public protocol NotificationPublishing: Sendable {
    /// Publishes `event`, whose JSON encoding is `body`, and returns the event id once the
    /// log has it.
    func publish(_ event: NotificationEvent, body: [UInt8]) async throws -> String
}
