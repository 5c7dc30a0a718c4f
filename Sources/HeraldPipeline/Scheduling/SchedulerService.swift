import Foundation
import HeraldDomain
import HeraldKafka
import HeraldRedis
import HeraldStreams
import Logging
import ServiceLifecycle
import Synchronization

/// The scheduler role: keeps the due index of its partitions of `herald.scheduled` in Redis
/// and releases each schedule at its time.
///
/// - **The log is the record.** On being assigned a partition the scheduler clears that
///   partition's index and reads the partition from its start (the consumer never commits
///   offsets), and releases nothing from it until it has read to the end it saw at assignment.
///   A flushed Redis (the `built` key gone) makes it read the partition again.
/// - **Exactly once.** A release writes the released events to `herald.events`, the schedule's
///   next state (or its tombstone) to `herald.scheduled` and its status, in one transaction of
///   a producer whose transactional id belongs to the partition: whoever owns the partition
///   next fences the previous owner, and reads the new state before it releases anything.
/// - **Cancelling.** A cancel request on the topic cancels the pending releases, in the same
///   kind of transaction; one read while catching up waits until the partition is read.
public final class SchedulerService: Service, Sendable {
    public let configuration: PipelineConfiguration
    private let logger: Logger
    private let stopping = Atomic<Bool>(false)

    public init(configuration: PipelineConfiguration, logger: Logger = Logger(label: "herald.scheduler")) {
        self.configuration = configuration
        self.logger = logger
    }

    private func clock() -> Date { configuration.scheduleClock() }

    public func stop() { stopping.store(true, ordering: .releasing) }

    /// What the scheduler knows about one partition it owns.
    private struct Partition {
        /// Read up to here before releasing; nil once caught up.
        var catchUpTo: Int64?
        var producer: KafkaProducer?
        /// Cancel requests read while catching up, handled once the partition is read.
        var deferredCancels: [String] = []
    }

    public func run() async throws {
        let redis = RedisConnection(configuration: configuration.redis, logger: logger)
        defer { redis.close() }
        let index = ScheduleIndex(redis: redis, layout: configuration.layout)
        let topic = configuration.topics.scheduled
        let changes = Mutex<[KafkaRebalanceEvent]>([])
        let consumer = try KafkaConsumer(
            configuration: configuration.consumerConfiguration(group: configuration.schedulerGroup, fetchWaitMaxMs: 100), logger: logger
        ) { event in changes.withLock { $0.append(event) } }
        try consumer.subscribe(topics: [topic])
        logger.info("scheduler starting", metadata: ["group": "\(configuration.schedulerGroup)", "topic": "\(topic)"])
        var partitions: [Int32: Partition] = [:]
        var lastBuiltCheck = ContinuousClock.now
        try await withGracefulShutdownHandler {
            while !stopping.load(ordering: .acquiring) && !Task.isCancelled {
                for event in changes.withLock({ events in
                    defer { events = [] }
                    return events
                }) {
                    try await handle(event, partitions: &partitions, index: index, consumer: consumer)
                }
                let batch = try await consumer.pollBatch(maxMessages: 500, timeout: .milliseconds(100))
                for message in batch where partitions[message.partition] != nil {
                    try await apply(message, partition: &partitions[message.partition]!, index: index)
                }
                for number in partitions.keys.sorted() where partitions[number]?.catchUpTo != nil {
                    try await checkCaughtUp(number, partitions: &partitions, consumer: consumer, index: index)
                }
                if ContinuousClock.now - lastBuiltCheck >= .seconds(1) {
                    lastBuiltCheck = ContinuousClock.now
                    try await rebuildLostIndexes(&partitions, index: index, consumer: consumer)
                }
                for number in partitions.keys.sorted() where partitions[number]?.catchUpTo == nil {
                    try await releaseDue(number, partition: &partitions[number]!, index: index)
                }
            }
        } onGracefulShutdown: {
            self.stop()
        }
        for state in partitions.values { await state.producer?.shutdown() }
        try? await consumer.close()
    }

    // MARK: Partitions

    private func handle(
        _ event: KafkaRebalanceEvent, partitions: inout [Int32: Partition], index: ScheduleIndex, consumer: KafkaConsumer
    ) async throws {
        switch event {
        case .assigned(let assigned):
            for topicPartition in assigned {
                try await index.clear(topicPartition.partition)
                // From the start, whatever was fetched before this event was handled (records of
                // a partition not known here yet are skipped).
                try await consumer.seek([
                    KafkaTopicPartitionOffset(
                        topic: topicPartition.topic, partition: topicPartition.partition, offset: KafkaTopicPartitionOffset.beginning)
                ])
                partitions[topicPartition.partition] = Partition(
                    catchUpTo: try await consumer.queryWatermarkOffsets(topic: topicPartition.topic, partition: topicPartition.partition)
                        .high
                )
                logger.info(
                    "scheduler partition assigned; reading it from the start", metadata: ["partition": "\(topicPartition.partition)"])
            }
        case .revoked(let taken), .lost(let taken):
            for topicPartition in taken {
                await partitions.removeValue(forKey: topicPartition.partition)?.producer?.shutdown()
            }
        @unknown default:
            break
        }
    }

    private func checkCaughtUp(_ number: Int32, partitions: inout [Int32: Partition], consumer: KafkaConsumer, index: ScheduleIndex)
        async throws
    {
        guard let target = partitions[number]?.catchUpTo else { return }
        let position =
            try consumer.position([KafkaTopicPartition(topic: configuration.topics.scheduled, partition: number)]).first?.offset ?? -1
        guard target <= 0 || position >= target else { return }
        partitions[number]!.catchUpTo = nil
        try await index.markBuilt(number)
        logger.info("scheduler partition read; releasing from it", metadata: ["partition": "\(number)"])
        for eventId in partitions[number]!.deferredCancels {
            try await cancel(eventId, partition: &partitions[number]!, number: number, index: index)
        }
        partitions[number]!.deferredCancels = []
    }

    /// Reads again, from the start, every caught-up partition whose index vanished.
    private func rebuildLostIndexes(_ partitions: inout [Int32: Partition], index: ScheduleIndex, consumer: KafkaConsumer) async throws {
        for number in partitions.keys.sorted() where partitions[number]?.catchUpTo == nil {
            guard !(try await index.isBuilt(number)) else { continue }
            logger.warning("scheduler index is gone from Redis; reading the partition again", metadata: ["partition": "\(number)"])
            let topic = configuration.topics.scheduled
            try await index.clear(number)
            try await consumer.seek([
                KafkaTopicPartitionOffset(topic: topic, partition: number, offset: KafkaTopicPartitionOffset.beginning)
            ])
            partitions[number]!.catchUpTo = try await consumer.queryWatermarkOffsets(topic: topic, partition: number).high
        }
    }

    // MARK: Records

    private func apply(_ message: KafkaMessage, partition: inout Partition, index: ScheduleIndex) async throws {
        guard let key = message.key.map({ String(decoding: $0, as: UTF8.self) }) else { return }
        guard let value = message.value else {
            try await index.remove(key, partition: message.partition)
            return
        }
        let record: ScheduleRecord
        do {
            record = try JSONDecoder().decode(ScheduleRecord.self, from: Data(value))
        } catch {
            logger.error(
                "unreadable record on the schedule topic; skipped",
                metadata: ["key": "\(key)", "offset": "\(message.offset)", "error": "\(error)"])
            return
        }
        switch record {
        case .schedule(let scheduled):
            try await index.store(scheduled, partition: message.partition, onlyIfNewer: true)
        case .cancel(let eventId, _):
            if partition.catchUpTo != nil {
                partition.deferredCancels.append(eventId)
            } else {
                try await cancel(eventId, partition: &partition, number: message.partition, index: index)
            }
        }
    }

    // MARK: Releases and cancels

    /// Releases everything due in one transaction: each due schedule's released events, its
    /// next state (or tombstone) and its status.
    private func releaseDue(_ number: Int32, partition: inout Partition, index: ScheduleIndex) async throws {
        let now = clock()
        var done: [(next: ScheduledEvent, released: [ScheduledRelease], status: StatusRecord)] = []
        var messages: [KafkaOutgoingMessage] = []
        for scheduled in try await index.items(try await index.due(number, now: now), partition: number) {
            var next = scheduled
            next.revision += 1
            var released: [ScheduledRelease] = []
            for position in next.releases.indices
            where next.releases[position].state == .pending && next.releases[position].releaseAt <= now {
                next.releases[position].state = .released
                released.append(next.releases[position])
            }
            guard !released.isEmpty else { continue }
            for release in released {
                var event = scheduled.event.released(release)
                event.publishedAt = now
                // The id of a sendAt event is already claimed, by the record that scheduled it.
                let claim = release.eventId == scheduled.eventId ? scheduled.claim : ""
                messages.append(
                    KafkaOutgoingMessage(
                        topic: configuration.topics.events, key: Array(release.eventId.utf8), value: event.canonicalJSON(),
                        headers: [KafkaHeader(key: EventPlanner.releaseHeader, value: claim)]
                    ))
            }
            let status = StatusRecord.scheduled(next, at: now)
            messages += try stateMessages(next, status: status, number: number)
            done.append((next, released, status))
        }
        guard !done.isEmpty, try await transact(messages, what: "release", number: number, partition: &partition) else { return }
        for (next, released, status) in done {
            try await finish(next, status: status, number: number, index: index)
            let late = released.map { now.timeIntervalSince($0.releaseAt) }.max() ?? 0
            logger.info(
                "schedule released",
                metadata: [
                    "eventId": "\(next.eventId)", "releases": "\(released.map(\.eventId).joined(separator: ","))",
                    "lateMs": "\(Int(late * 1_000))", "pending": "\(next.pending.count)",
                ])
        }
    }

    private func cancel(_ eventId: String, partition: inout Partition, number: Int32, index: ScheduleIndex) async throws {
        guard var next = try await index.item(eventId, partition: number), !next.pending.isEmpty else {
            // Too late (or unknown): nothing to cancel. A tombstone after the request keeps it
            // from staying the key's latest value on the compacted topic.
            logger.info("cancel request for a schedule with nothing pending; nothing to do", metadata: ["eventId": "\(eventId)"])
            let tombstone = KafkaOutgoingMessage(
                topic: configuration.topics.scheduled, partition: number, key: Array(eventId.utf8), value: nil)
            _ = try await transact([tombstone], what: "tombstone after a late cancel request", number: number, partition: &partition)
            return
        }
        next.revision += 1
        for position in next.releases.indices where next.releases[position].state == .pending {
            next.releases[position].state = .cancelled
        }
        let released = next.releases.filter { $0.state == .released }.count
        let status = StatusRecord.scheduled(
            next, reason: "cancelled with \(released) of \(next.releases.count) releases sent", at: clock())
        let messages = try stateMessages(next, status: status, number: number)
        guard try await transact(messages, what: "cancel", number: number, partition: &partition) else { return }
        try await finish(next, status: status, number: number, index: index)
        logger.info("schedule cancelled", metadata: ["eventId": "\(eventId)", "released": "\(released)"])
    }

    /// A schedule's next state on this partition (its tombstone once nothing is pending) and its status.
    private func stateMessages(_ next: ScheduledEvent, status: StatusRecord, number: Int32) throws -> [KafkaOutgoingMessage] {
        let value = next.pending.isEmpty ? nil : Array(try JSONEncoder().encode(ScheduleRecord.schedule(next)))
        return [
            KafkaOutgoingMessage(topic: configuration.topics.scheduled, partition: number, key: Array(next.eventId.utf8), value: value),
            StatusCoding.message(status, topic: configuration.topics.status),
        ]
    }

    /// `messages` in one transaction of the partition's producer. False when it did not commit
    /// (the producer is replaced and the work is done again on the next round).
    private func transact(_ messages: [KafkaOutgoingMessage], what: String, number: Int32, partition: inout Partition) async throws -> Bool
    {
        let producer = try await producer(for: number, partition: &partition)
        do {
            try producer.beginTransaction()
            for message in messages { try producer.enqueue(message) }
            try await producer.commitTransaction()
            return true
        } catch {
            logger.warning(
                "schedule transaction failed; trying again with a new producer",
                metadata: ["work": "\(what)", "partition": "\(number)", "error": "\(error)"])
            try? await producer.abortTransaction()
            await producer.shutdown()
            partition.producer = nil
            return false
        }
    }

    /// After the commit: the index and the status in Redis follow.
    private func finish(_ next: ScheduledEvent, status: StatusRecord, number: Int32, index: ScheduleIndex) async throws {
        try await index.store(next, partition: number, onlyIfNewer: false)
        _ = try await index.redis.send(
            StatusScripts.write(status, layout: configuration.layout, ttlSeconds: configuration.statusTTLSeconds))
    }

    /// The partition's transactional producer: its id names the partition, so the next owner
    /// of the partition fences this one.
    private func producer(for number: Int32, partition: inout Partition) async throws -> KafkaProducer {
        if let producer = partition.producer { return producer }
        var producerConfiguration = configuration.transactionalProducerConfiguration(role: "scheduler", lane: nil, forDeliveries: false)
        producerConfiguration.transactionalId = "\(configuration.transactionalIdPrefix)-\(configuration.schedulerGroup)-p\(number)"
        let producer = try KafkaProducer(configuration: producerConfiguration, logger: logger)
        try await producer.initTransactions()
        partition.producer = producer
        return producer
    }
}
