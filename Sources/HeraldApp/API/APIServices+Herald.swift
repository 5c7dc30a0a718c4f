import HeraldAPI
import HeraldDomain
import HeraldPipeline
import HeraldRedis
import HeraldRegistry

// HeraldRegistry's service and HeraldPipeline's status reader have exactly the methods the
// API declares for them.
extension RegistrationService: RegistrationStore {}
extension StatusReader: NotificationStatusReading {}

/// `POST /v1/notifications` publishes through the pipeline's event publisher (acks=all).
///
/// An event with an id the planner has already claimed is checked against that claim first:
/// other content is a conflict (409); the same content is a retry, answered again without a
/// second record. (An id published but not planned yet is published again; the planner then
/// skips the retry or dead-letters the conflict.)
struct KafkaNotificationPublisher: NotificationPublishing {
    let publisher: EventPublisher
    let pool: RedisConnectionPool
    let layout: SlotLayout

    func publish(_ event: NotificationEvent, body: [UInt8]) async throws -> String {
        if let id = event.id {
            let stored = try await pool.withConnection { try await $0.send(.get(layout.eventClaimKey(eventId: id))) }.string
            if let claim = stored.flatMap(EventClaim.init) {
                let fingerprint = EventClaim.fingerprint(of: event)
                if claim.conflicts(with: fingerprint) { throw EventIdConflict(eventId: id) }
                if claim.fingerprint == fingerprint { return id }
            }
        }
        return try await publisher.publish(event).eventId
    }
}
