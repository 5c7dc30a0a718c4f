import Foundation
import HeraldAPI
import HeraldDomain
import HeraldKafka
import HeraldPipeline
import HeraldRedis
import HeraldRegistry
import HeraldStreams
import Logging

/// Reads a published event back from `herald.events`, for a correction: the event's claim in
/// Redis (`SlotLayout.eventClaimKey`, kept as long as its status) says at which partition and
/// offset the planner took it; one read of that record gives the event as it was published.
struct KafkaEventArchive: EventArchive {
    let pool: RedisConnectionPool
    let layout: SlotLayout
    let records: KafkaRecordReader

    init(pool: RedisConnectionPool, layout: SlotLayout, topic: String, bootstrapServers: String, extra: [String: String], logger: Logger) {
        self.pool = pool
        self.layout = layout
        records = KafkaRecordReader(topic: topic, bootstrapServers: bootstrapServers, extra: extra, logger: logger)
    }

    func event(eventId: String, hub: HubName) async throws -> NotificationEvent? {
        let key = layout.hub(hub).eventClaimKey(eventId: eventId)
        guard let claim = try await pool.withConnection({ try await $0.send(.get(key)) }).string.flatMap(EventClaim.init) else {
            return nil
        }
        guard let message = try await records.record(partition: claim.partition, offset: claim.offset), let value = message.value
        else {
            return nil
        }
        var event = try NotificationEvent.decode(value, limits: .trusted)
        event.id = event.id ?? eventId
        return event
    }
}

/// Reads one record of a topic by its partition and offset (committed records only).
struct KafkaRecordReader: Sendable {
    let topic: String
    let bootstrapServers: String
    let extra: [String: String]
    let logger: Logger
    /// How long the record is waited for before the read gives up.
    var wait: Duration = .seconds(10)

    /// The record at `offset` of `partition`; nil when the log no longer holds it.
    func record(partition: Int32, offset: Int64) async throws -> KafkaMessage? {
        var configuration = KafkaConsumerConfiguration(bootstrapServers: bootstrapServers)
        configuration.clientId = "herald-record-reader"
        configuration.isolationLevel = .readCommitted
        configuration.extra = extra
        let consumer = try KafkaConsumer(configuration: configuration, logger: logger)
        do {
            let found = try await read(consumer, partition: partition, offset: offset)
            try? await consumer.close()
            return found
        } catch {
            try? await consumer.close()
            throw error
        }
    }

    private func read(_ consumer: KafkaConsumer, partition: Int32, offset: Int64) async throws -> KafkaMessage? {
        try consumer.assign([KafkaTopicPartitionOffset(topic: topic, partition: partition, offset: offset)])
        let deadline = ContinuousClock.now + wait
        while ContinuousClock.now < deadline {
            for message in try await consumer.pollBatch(maxMessages: 10, timeout: .milliseconds(250)) where message.offset >= offset {
                return message.offset == offset ? message : nil
            }
        }
        throw ReadTimeout(topic: topic, partition: partition, offset: offset)
    }

    struct ReadTimeout: Error, CustomStringConvertible {
        var topic: String
        var partition: Int32
        var offset: Int64
        var description: String { "no record of \(topic) partition \(partition) at offset \(offset) was read in time" }
    }
}

/// The events' dead letters (`herald.events.dlq`) for `GET /v1/deadletters` and its replay:
/// the list reads the topic to its end (dead letters are few; an operator reads them now and
/// then), one dead letter is read by its partition and offset.
struct KafkaDeadLetters: DeadLetterStore {
    let topic: String
    let eventsTopic: String
    let bootstrapServers: String
    let extra: [String: String]
    let logger: Logger

    func deadLetters(hub: HubName, limit: Int) async throws -> [DeadLetterEntry] {
        var tail = RecordTail(topic: topic, bootstrapServers: bootstrapServers)
        tail.extra = extra
        var entries: [DeadLetterEntry] = []
        for try await message in tail.records(logger: logger) {
            guard let value = message.value,
                let entry = DeadLetterEntry(envelope: value, partition: message.partition, offset: message.offset), entry.hub == hub
            else { continue }
            entries.append(entry)
        }
        let newest = entries.sorted {
            ($0.deadLetteredAt ?? "", $0.partition, $0.offset) > ($1.deadLetteredAt ?? "", $1.partition, $1.offset)
        }
        return Array(newest.prefix(limit))
    }

    func deadLetter(partition: Int32, offset: Int64, hub: HubName) async throws -> DeadLetterEntry? {
        let reader = KafkaRecordReader(topic: topic, bootstrapServers: bootstrapServers, extra: extra, logger: logger)
        guard let message = try await reader.record(partition: partition, offset: offset), let value = message.value,
            let entry = DeadLetterEntry(envelope: value, partition: partition, offset: offset), entry.hub == hub
        else { return nil }
        return entry
    }
}

/// `herald correct`: corrects an event as `POST /v1/notifications/{id}/corrections` does
/// (`AlertCorrection`), with a producer and a Redis connection of its own.
public struct EventCorrector: Sendable {
    let pool: RedisConnectionPool
    let producer: KafkaProducer
    let correction: AlertCorrection

    public init(settings: HeraldSettings) throws {
        let pool = RedisConnectionPool(configuration: try settings.redisConfiguration(), size: 1)
        let logger = Logger(label: "herald.correct")
        let producer = try KafkaProducer(configuration: settings.reliableProducerConfiguration(clientId: "herald-correct"), logger: logger)
        let topics = try settings.topics
        let layout = try settings.layout()
        let archive = KafkaEventArchive(
            pool: pool, layout: layout, topic: topics.events, bootstrapServers: settings[.kafkaBrokers],
            extra: try settings.kafkaProperties(), logger: logger)
        self.pool = pool
        self.producer = producer
        correction = AlertCorrection(
            statusReader: StatusReader(pool: pool, layout: layout), archive: archive,
            publisher: KafkaNotificationPublisher(publisher: EventPublisher(producer: producer, topics: topics), pool: pool, layout: layout)
        )
    }

    /// Publishes the correction and returns its id; a refusal throws its words
    /// (`EventCancellationRefused`, as for `herald cancel`).
    public func correct(eventId: String, hub: HubName, request: CorrectionRequest, by caller: String?) async throws -> String {
        do {
            return try await correction.correct(eventId: eventId, hub: hub, request: request, caller: caller, now: Date())
        } catch let error as APIError {
            throw EventCancellationRefused(message: error.message)
        }
    }

    public func shutdown() async {
        await producer.shutdown()
        pool.shutdown()
    }
}
