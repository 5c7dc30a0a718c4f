import Foundation
import HeraldDomain
import HeraldKafka
import Logging

/// Puts notification events on `herald.events` for the planner: used by
/// `POST /v1/notifications` and `herald publish`.
///
/// Assigns an id when the event has none and stamps `publishedAt` (unless the publisher
/// already did, so latency is measured from the newsroom's clock), then waits for Kafka's
/// acknowledgement: once `publish` returns, the event will be planned.
public final class EventPublisher: Sendable {
    public let topic: String
    private let producer: KafkaProducer
    private let ownsProducer: Bool

    /// Publishes through an existing producer (for example the API's shared one).
    public init(producer: KafkaProducer, topics: HeraldTopics = HeraldTopics()) {
        self.producer = producer
        self.topic = topics.events
        self.ownsProducer = false
    }

    /// Creates its own idempotent producer.
    public init(
        bootstrapServers: String, topics: HeraldTopics = HeraldTopics(), extra: [String: String] = [:],
        logger: Logger = Logger(label: "herald.publisher")
    ) throws {
        var configuration = KafkaProducerConfiguration(bootstrapServers: bootstrapServers)
        configuration.clientId = "herald-publisher"
        configuration.lingerMs = 0
        configuration.extra = extra
        self.producer = try KafkaProducer(configuration: configuration, logger: logger)
        self.topic = topics.events
        self.ownsProducer = true
    }

    /// What a publish did.
    public struct Receipt: Sendable, Hashable {
        public var eventId: String
        public var publishedAt: Date
        public var partition: Int32
        public var offset: Int64
    }

    /// The record header that makes an event a rehearsal (`dryRun`): the planner plans and
    /// resolves it under `DerivedSend.rehearsal`'s id, and its tasks write no delivery.
    public static let rehearsalHeader = "herald-rehearsal"

    /// Publishes `event` (as a rehearsal with `rehearsal`); returns its (possibly assigned) id
    /// and where Kafka stored it.
    @discardableResult
    public func publish(_ event: NotificationEvent, now: Date = Date(), rehearsal: Bool = false) async throws -> Receipt {
        var event = event
        let id = event.id ?? Self.newEventId()
        event.id = id
        let publishedAt = event.publishedAt ?? now
        event.publishedAt = publishedAt
        let report = try await producer.send(
            KafkaOutgoingMessage(
                topic: topic, key: Array(event.hub.recordKey(id).utf8), value: event.canonicalJSON(),
                headers: [KafkaHeader(key: "content-type", value: "application/json")]
                    + (rehearsal ? [KafkaHeader(key: Self.rehearsalHeader, value: "1")] : [])
            ))
        return Receipt(eventId: id, publishedAt: publishedAt, partition: report.partition, offset: report.offset)
    }

    /// Validates untrusted JSON (an HTTP body, a file) with the domain rules and publishes it.
    /// Throws the `ValidationFailure` for an invalid event, which is then not published.
    @discardableResult
    public func publish(json bytes: some Collection<UInt8>, limits: EventLimits = .default, now: Date = Date()) async throws -> Receipt {
        let event = try NotificationEvent.decode(bytes, limits: limits)
        return try await publish(event, now: now)
    }

    /// Flushes and stops the producer when this publisher created it.
    public func shutdown() async {
        if ownsProducer { await producer.shutdown() }
    }

    /// `evt-` and 26 lowercase base-32 characters of a random UUID: URL- and key-safe, and
    /// within the event id alphabet.
    public static func newEventId() -> String {
        let uuid = UUID().uuid
        let bytes = [
            uuid.0, uuid.1, uuid.2, uuid.3, uuid.4, uuid.5, uuid.6, uuid.7,
            uuid.8, uuid.9, uuid.10, uuid.11, uuid.12, uuid.13, uuid.14, uuid.15,
        ]
        let alphabet = Array("0123456789abcdefghjkmnpqrstvwxyz".utf8)
        var text: [UInt8] = Array("evt-".utf8)
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = (buffer << 8) | UInt32(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                text.append(alphabet[Int((buffer >> UInt32(bits)) & 31)])
            }
        }
        if bits > 0 { text.append(alphabet[Int((buffer << UInt32(5 - bits)) & 31)]) }
        return String(decoding: text, as: UTF8.self)
    }
}
