import Foundation
import HeraldKafka
import Logging
import Synchronization

/// Reads `herald.deliveries` as a downstream sender would (`read_committed`, every
/// partition) and keeps, per event id, how many deliveries it has seen and when it saw the
/// first and the last. "Seen" is the moment a poll handed the record to this process, so a
/// figure measured here is what a consumer of the topic experiences.
///
/// It assigns partitions instead of joining a group: no rebalance wait, nothing committed.
///
/// With `priorityPartitions` > 0 it reads like a priority-aware sender: the first partitions
/// (the ones express lanes write, `PipelineConfiguration.expressDeliveryPartitions`) get a
/// consumer of their own, so a one-user delivery is not queued behind a broadcast backlog in
/// the same fetch queue. docs/topics.md recommends this to senders.
final class DeliveryWatcher: Sendable {
    struct EventStats: Sendable {
        var count = 0
        /// The values' bytes of the records counted (what the ceiling's `averageRecordBytes`
        /// is compared with).
        var valueBytes = 0
        var firstSeen: Date?
        var lastSeen: Date?
        /// The first record seen of the event, kept whole: it carries the worker's
        /// `renderedAt`, which splits a latency into worker time and broker time.
        var firstRecord: [UInt8]?
        /// The running count after each poll that brought records of the event: when the
        /// reader fell behind the worker, and by how much.
        var progress: [(seen: Date, count: Int)] = []

        /// How many had been seen at `date`.
        func count(at date: Date) -> Int {
            progress.last { $0.seen <= date }?.count ?? 0
        }
    }

    /// Fetch settings of the consumer reading the bulk partitions (and of the ceiling's
    /// reader): the broker answers once this much is ready or after the wait. The wait bounds
    /// what it can add to a measured broadcast (its last records) at 25 ms.
    static let bulkFetchMinBytes = 1_048_576
    static let bulkFetchWaitMaxMs = 25

    private let consumers: [KafkaConsumer]
    /// The consumer of the priority (express) partitions and its partitions, when there is one.
    private let priority: (consumer: KafkaConsumer, partitions: [KafkaTopicPartition])?
    /// The consumer of the bulk partitions (all of them without a priority consumer).
    private let bulk: (consumer: KafkaConsumer, partitions: [KafkaTopicPartition])
    private let events = Mutex<[String: EventStats]>([:])
    private let total = Atomic<Int>(0)
    private let stopping = Atomic<Bool>(false)
    private let loops = Mutex<[Task<Void, Never>]>([])
    private let logger: Logger

    init(
        bootstrapServers: String, topic: String, partitions: Int, priorityPartitions: Int = 0,
        extra: [String: String] = [:], logger: Logger
    ) throws {
        var configuration = KafkaConsumerConfiguration(bootstrapServers: bootstrapServers)
        configuration.clientId = "herald-bench-watcher"
        configuration.isolationLevel = .readCommitted
        configuration.maxPollRecords = 10_000
        // Latency resolution of the priority partitions: an idle fetch returns after at most
        // this long.
        configuration.fetchWaitMaxMs = 5
        configuration.extra = extra
        let priority = min(max(0, priorityPartitions), partitions - 1)
        let groups = priority > 0 ? [0..<priority, priority..<partitions] : [0..<partitions]
        let consumers: [KafkaConsumer] = try groups.map { range in
            var configuration = configuration
            if priority == 0 || range.lowerBound >= priority {
                // Bulk partitions are read for throughput, as docs/topics.md recommends to
                // senders: fewer, fuller fetches cost the broker and the reader less per record.
                configuration.fetchMinBytes = Self.bulkFetchMinBytes
                configuration.fetchWaitMaxMs = Self.bulkFetchWaitMaxMs
            }
            let consumer = try KafkaConsumer(configuration: configuration, logger: logger)
            try consumer.assign(
                range.map {
                    KafkaTopicPartitionOffset(topic: topic, partition: Int32($0), offset: KafkaTopicPartitionOffset.beginning)
                })
            return consumer
        }
        self.consumers = consumers
        self.priority =
            priority > 0
            ? (consumers[0], (0..<priority).map { KafkaTopicPartition(topic: topic, partition: Int32($0)) })
            : nil
        let bulkRange = groups[groups.count - 1]
        bulk = (consumers[consumers.count - 1], bulkRange.map { KafkaTopicPartition(topic: topic, partition: Int32($0)) })
        self.logger = logger
    }

    /// Pauses or resumes reading the priority partitions. A phase without one-user events
    /// pauses them: nothing is written there during a plain broadcast, and on a broker that
    /// answers a waiting fetch late the 5 ms idle fetches would cost the broker and this
    /// process CPU that the measured broadcast needs (the ceiling's reader has no such
    /// consumer either).
    func readPriorityPartitions(_ enabled: Bool) throws {
        guard let priority else { return }
        if enabled { try priority.consumer.resume(priority.partitions) } else { try priority.consumer.pause(priority.partitions) }
    }

    /// Pauses or resumes reading the bulk partitions. With the commit clock
    /// (`CommitWatcher`) a measured fan-out is not read while it runs, so the reader takes no
    /// CPU from it; its deliveries are read and counted once the clock stopped.
    func readBulkPartitions(_ enabled: Bool) throws {
        if enabled { try bulk.consumer.resume(bulk.partitions) } else { try bulk.consumer.pause(bulk.partitions) }
    }

    func start() {
        let tasks = consumers.map { consumer in
            Task { [self] in
                while !stopping.load(ordering: .relaxed) {
                    do {
                        // Counted in place in librdkafka's buffers: the reader is on the same
                        // cores as the system it measures, so it copies nothing.
                        let batch = try await consumer.pollBorrowing(maxMessages: 10_000, timeout: .milliseconds(50)) {
                            Self.count($0)
                        }
                        if batch.records > 0 { record(batch, at: Date()) }
                    } catch {
                        if stopping.load(ordering: .relaxed) { break }
                        logger.warning("delivery watcher poll failed", metadata: ["error": "\(error)"])
                        try? await Task.sleep(for: .milliseconds(50))
                    }
                }
            }
        }
        loops.withLock { $0 = tasks }
    }

    func stop() async {
        stopping.store(true, ordering: .relaxed)
        for task in loops.withLock({ $0 }) { await task.value }
        for consumer in consumers { try? await consumer.close() }
    }

    var recordsSeen: Int { total.load(ordering: .relaxed) }

    func stats(_ eventId: String) -> EventStats {
        events.withLock { $0[eventId] } ?? EventStats()
    }

    /// Waits until `expected` deliveries of `eventId` were seen; throws after `timeout` with
    /// what was seen so far.
    func waitFor(eventId: String, expected: Int, timeout: Duration) async throws -> EventStats {
        let deadline = ContinuousClock.now + timeout
        while true {
            let current = stats(eventId)
            if current.count >= expected { return current }
            if ContinuousClock.now >= deadline {
                throw BenchmarkError(
                    "event \(eventId): saw \(current.count) of \(expected) expected deliveries within \(timeout)", code: "bench_timeout"
                )
            }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    private static let opening = Array(#"{"deliveryId":""#.utf8)
    /// A record of a hub other than the default one starts with its hub: `{"hub":"<hub>",`.
    private static let hubOpening = Array(#"{"hub":""#.utf8)
    private static let deliveryIdKey = Array(#""deliveryId":""#.utf8)

    /// One poll's records, counted per event id.
    struct BatchCounts: Sendable {
        var records = 0
        var counts: [String: Int] = [:]
        var valueBytes: [String: Int] = [:]
        var firstRecords: [String: [UInt8]] = [:]
    }

    /// Counts the batch per event id. Consecutive records nearly always share an event, so
    /// the id string is only built when it changes.
    static func count(_ batch: KafkaBorrowedBatch) -> BatchCounts {
        var result = BatchCounts()
        result.records = batch.count
        var currentBytes: [UInt8] = []
        var currentId = ""
        for message in batch {
            guard let value = message.value, let range = eventIdRange(value) else { continue }
            let id = UnsafeRawBufferPointer(rebasing: value[range])
            if !currentBytes.elementsEqual(id) {
                currentBytes = Array(id)
                currentId = String(decoding: id, as: UTF8.self)
                if result.firstRecords[currentId] == nil { result.firstRecords[currentId] = Array(value) }
            }
            result.counts[currentId, default: 0] += 1
            result.valueBytes[currentId, default: 0] += value.count
        }
        return result
    }

    private func record(_ batch: BatchCounts, at now: Date) {
        total.add(batch.records, ordering: .relaxed)
        events.withLock { events in
            for (id, count) in batch.counts {
                var stats = events[id] ?? EventStats()
                stats.count += count
                stats.valueBytes += batch.valueBytes[id] ?? 0
                if stats.firstSeen.map({ now < $0 }) ?? true {
                    stats.firstSeen = now
                    stats.firstRecord = batch.firstRecords[id]
                }
                if stats.lastSeen.map({ now > $0 }) ?? true { stats.lastSeen = now }
                stats.progress.append((now, stats.count))
                events[id] = stats
            }
        }
    }

    /// The event id at the start of a delivery record: `{"deliveryId":"<event>/...`, or
    /// `{"hub":"<hub>","deliveryId":"<event>/...` in a hub other than the default one.
    static func eventIdBytes(_ value: [UInt8]) -> ArraySlice<UInt8>? {
        value.withUnsafeBytes { eventIdRange($0) }.map { value[$0] }
    }

    /// Where the event id sits in a delivery record's bytes.
    static func eventIdRange(_ value: UnsafeRawBufferPointer) -> Range<Int>? {
        var start: Int
        if value.count > opening.count, value[0..<opening.count].elementsEqual(opening) {
            start = opening.count
        } else if value.count > hubOpening.count, value[0..<hubOpening.count].elementsEqual(hubOpening) {
            // A hub name has no quote to escape: the first quote ends it, and `,` follows.
            guard let quote = value[hubOpening.count...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
            start = quote + 2
            guard value.count > start + deliveryIdKey.count,
                value[start..<(start + deliveryIdKey.count)].elementsEqual(deliveryIdKey)
            else { return nil }
            start += deliveryIdKey.count
        } else {
            return nil
        }
        guard let slash = value[start...].firstIndex(of: UInt8(ascii: "/")) else { return nil }
        return start..<slash
    }
}
