import HeraldDomain

/// The latest `herald.status` record of an event, for `GET /v1/notifications/{id}`.
public protocol NotificationStatusReading: Sendable {
    /// `nil` when no status is known for `eventId`.
    func status(eventId: String) async throws -> StatusRecord?
}
