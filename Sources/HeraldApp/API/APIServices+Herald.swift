import HeraldAPI
import HeraldDomain
import HeraldPipeline
import HeraldRegistry

// HeraldRegistry's service and HeraldPipeline's status reader have exactly the methods the
// API declares for them.
extension RegistrationService: RegistrationStore {}
extension StatusReader: NotificationStatusReading {}

/// `POST /v1/notifications` publishes through the pipeline's event publisher (acks=all).
struct KafkaNotificationPublisher: NotificationPublishing {
    let publisher: EventPublisher

    func publish(_ event: NotificationEvent, body: [UInt8]) async throws -> String {
        try await publisher.publish(event).eventId
    }
}
