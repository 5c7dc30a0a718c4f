import Foundation
import HeraldDomain
import HeraldKafka
import HeraldPipeline
import Logging
import Synchronization

/// The reference every fan-out figure is divided by: Herald's own `KafkaProducer`, configured
/// like the fan-out's delivery producer, writing real delivery records (same sizes, same
/// keys) to a topic with the deliveries topic's partition count. No Redis, no rendering.
///
/// Transactional, in as many transactions as a broadcast has tasks and with as many producers
/// as the workers have bulk lanes, each transaction writing one partition of the bulk range and
/// the next transaction the next partition (what the fan-out does), timed twice: until the last commit
/// returned, and by the clock that times the fan-out (`BenchmarkOptions.Clock`); the second is
/// the reference. With the `committed` clock every transaction also writes one progress record
/// to a commits topic, as a fan-out task writes its `TaskProgress` to `herald.status`, and the
/// same `CommitWatcher` stops the clock; each producer has a partition of that topic to itself,
/// so no two transactions overlap on one partition (which the embedded broker resolves late).
/// With `seen`, the clock stops when a `read_committed` consumer of the records saw the last
/// one. Then the same records through idempotent producers without transactions.
struct BrokerCeiling: Sendable {
    typealias Result = BenchmarkReport.Ceiling
    /// The event id in the records: the main population's broadcast event id
    /// (`BenchmarkNames.broadcastEventId`). The ceiling's topics are its own, so nothing else
    /// reads records with this id from them.
    let eventId: String
    let configuration: PipelineConfiguration
    let topic: String
    let partitions: Int
    let records: Int
    let producers: Int
    let transactions: Int
    let population: SeedPopulation
    let meter: CPUMeter
    let clock: BenchmarkOptions.Clock
    let logger: Logger
    /// Also time the records through idempotent producers without transactions (the rounds'
    /// ceilings skip it: only the transactional run is a reference).
    var idempotent = true
    /// Worker processes alive around the measurement (the rounds', stopped while it is timed):
    /// their CPU is theirs in the account and the quiet wait, not other processes'.
    var workers: [WorkerProcess] = []
    /// Called with true right before the timed part and with false right after its clock
    /// stopped (or it failed): the rounds stop the idle workers and the phase's own readers
    /// for just that long, so a round's ceiling runs as alone as the run's first one.
    var aroundTimed: (@Sendable (_ starting: Bool) -> Void)? = nil

    private var commitsTopic: String { "\(topic).commits" }

    func run() async throws -> Result {
        let admin = try KafkaAdmin(
            configuration: {
                var admin = KafkaAdminConfiguration(bootstrapServers: configuration.bootstrapServers)
                admin.extra = configuration.kafkaExtra
                return admin
            }(), logger: logger)
        try await admin.createTopics(
            [
                KafkaTopicSpec(name: topic, partitions: partitions, replicationFactor: 1),
                KafkaTopicSpec(name: commitsTopic, partitions: producers, replicationFactor: 1),
            ], ignoreExisting: true)
        // The topic is deleted only once every client of it is destroyed: librdkafka 2.16 can
        // crash on its own thread (rd_kafka_metadata_update_op with a NULL topic name) when a
        // topic disappears under a live consumer. `measure` owns every client.
        let result: Result
        do {
            result = try await measure()
        } catch {
            try? await admin.deleteTopics([topic, commitsTopic], ignoreMissing: true)
            throw error
        }
        do { try await admin.deleteTopics([topic, commitsTopic], ignoreMissing: true) } catch {
            logger.warning("deleting a topic failed", metadata: ["topic": "\(topic)", "error": "\(error)"])
        }
        return result
    }

    private func measure() async throws -> Result {
        let sample = try DeliveryRecordSample(
            population: population, event: BenchmarkEvents.broadcast(id: eventId), eventId: eventId,
            count: min(records, min(population.count, 50_000))
        )
        let (transactional, cpu) = try await observedTransactionalRun(sample)
        let idempotent = self.idempotent ? try await idempotentRun(sample) : nil
        return Result(
            records: records, averageRecordBytes: sample.averageBytes, producers: producers, transactions: transactions,
            partitions: partitions, transactionalSeconds: transactional.committed,
            transactionalPerSecond: Double(records) / transactional.committed,
            observedSeconds: transactional.observed, observedPerSecond: Double(records) / transactional.observed,
            idempotentSeconds: idempotent, idempotentPerSecond: idempotent.map { Double(records) / $0 }, cpu: cpu,
            clock: clock.rawValue
        )
    }

    /// The transactional run, timed by readers that are destroyed when this returns.
    private func observedTransactionalRun(
        _ sample: DeliveryRecordSample
    ) async throws -> (times: (committed: Double, observed: Double), cpu: BenchmarkReport.CPUAccount) {
        // The readers of the plain broadcast phases: one throughput consumer of the records
        // (their consumer of the express partitions is paused, see
        // `DeliveryWatcher.readPriorityPartitions`) and the commit clock's status reader.
        let watcher = try DeliveryWatcher(
            bootstrapServers: configuration.bootstrapServers, topic: topic, partitions: partitions,
            extra: configuration.kafkaExtra, logger: logger
        )
        let commits = try CommitWatcher(
            bootstrapServers: configuration.bootstrapServers, topic: commitsTopic, partitions: producers,
            extra: configuration.kafkaExtra, logger: logger
        )
        watcher.start()
        commits.start()
        let transactional: (times: (committed: Double, observed: Double), cpu: BenchmarkReport.CPUAccount)
        do {
            transactional = try await transactionalRun(sample, watcher: watcher, commits: commits)
        } catch {
            await watcher.stop()
            await commits.stop()
            throw error
        }
        await watcher.stop()
        await commits.stop()
        return transactional
    }

    /// Returns the seconds until the last commit returned and until the clock stopped (every
    /// transaction's progress record seen, or the last record seen), and the CPU until then;
    /// with the `committed` clock the records are then read and counted.
    private func transactionalRun(
        _ sample: DeliveryRecordSample, watcher: DeliveryWatcher, commits: CommitWatcher
    ) async throws -> (times: (committed: Double, observed: Double), cpu: BenchmarkReport.CPUAccount) {
        var clients: [KafkaProducer] = []
        for index in 0..<producers {
            let id = "\(topic)-ceiling-\(index)-\(UUID().uuidString.prefix(6))"
            let producer = try KafkaProducer(
                configuration: configuration.deliveryProducerConfiguration(clientId: "herald-bench-ceiling", transactionalId: id),
                logger: logger)
            try await producer.initTransactions()
            // Warm-up transaction: metadata and producer id are fetched outside the timed part.
            try producer.beginTransaction()
            try enqueue(sample, range: 0..<1, on: producer)
            try enqueueProgress(
                eventId: "\(eventId)-warmup", index: index, count: producers, records: 1, producer: producer, partition: Int32(index))
            try await producer.commitTransaction()
            clients.append(producer)
        }
        let chunk = (records + transactions - 1) / transactions
        let timedTransactions = (records + chunk - 1) / chunk
        let bulkPartitions = bulkPartitions
        let next = SharedCounter()
        let records = records
        let warmups = clients.count
        _ = try await watcher.waitFor(eventId: eventId, expected: warmups, timeout: .seconds(60))
        let byCommits = clock == .committed
        if byCommits { try watcher.readBulkPartitions(false) }
        aroundTimed?(true)
        var timing = true
        defer { if timing { aroundTimed?(false) } }
        let before = meter.snapshot(workers: workers)
        let startedAt = Date()
        let started = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, producer) in clients.enumerated() {
                group.addTask {
                    while true {
                        let start = next.add(chunk)
                        guard start < records else { return }
                        let transaction = Int32(start / chunk)
                        let partition = bulkPartitions.lowerBound + transaction % Int32(bulkPartitions.count)
                        try producer.beginTransaction()
                        try await BlockingThreads.run(name: "herald.bench.ceiling") {
                            let range = start..<min(start + chunk, records)
                            try enqueue(sample, range: range, partition: partition, on: producer)
                            try enqueueProgress(
                                eventId: eventId, index: Int(transaction), count: timedTransactions, records: range.count,
                                producer: producer, partition: Int32(index)
                            )
                        }
                        try await producer.commitTransaction()
                    }
                }
            }
            try await group.waitForAll()
        }
        let seconds = (ContinuousClock.now - started).seconds
        let observed: Double
        let cpu: BenchmarkReport.CPUAccount
        if byCommits {
            let committed = try await commits.waitForAll(eventId: eventId, timeout: .seconds(300))
            cpu = meter.account(before, meter.snapshot(workers: workers))
            timing = false
            aroundTimed?(false)
            observed = (committed.lastCommitted ?? Date()).timeIntervalSince(startedAt)
            try watcher.readBulkPartitions(true)
            _ = try await watcher.waitFor(eventId: eventId, expected: warmups + records, timeout: .seconds(300))
        } else {
            let seen = try await watcher.waitFor(eventId: eventId, expected: warmups + records, timeout: .seconds(300))
            cpu = meter.account(before, meter.snapshot(workers: workers))
            timing = false
            aroundTimed?(false)
            observed = (seen.lastSeen ?? Date()).timeIntervalSince(startedAt)
        }
        for producer in clients { await producer.shutdown(flushTimeout: .seconds(5)) }
        return ((seconds, observed), cpu)
    }

    /// The transaction's progress record, as a fan-out task writes its `TaskProgress` to
    /// `herald.status` in the transaction of its deliveries.
    private func enqueueProgress(eventId: String, index: Int, count: Int, records: Int, producer: KafkaProducer, partition: Int32) throws {
        let now = Date()
        let progress = TaskProgress(
            eventId: eventId, taskIndex: index, taskCount: count, delivered: DeliveryCounts(total: records),
            startedAt: now, finishedAt: now
        )
        try producer.enqueue(
            KafkaOutgoingMessage(
                topic: commitsTopic, partition: partition, key: Array(eventId.utf8), value: Array(try JSONEncoder().encode(progress))
            ))
    }

    /// The fan-out's bulk range: the partitions after the express ones.
    private var bulkPartitions: Range<Int32> {
        let reserved = partitions > configuration.expressDeliveryPartitions ? configuration.expressDeliveryPartitions : 0
        return Int32(reserved)..<Int32(partitions)
    }

    /// Each producer writes one partition of the bulk range, as a lane writes one per task (so
    /// the same linger applies; spread by key, no batch would fill under the queue cap and each
    /// would wait for its linger).
    private func idempotentRun(_ sample: DeliveryRecordSample) async throws -> Double {
        var clients: [KafkaProducer] = []
        for _ in 0..<producers {
            let producer = try KafkaProducer(
                configuration: configuration.deliveryProducerConfiguration(clientId: "herald-bench-ceiling", transactionalId: nil),
                logger: logger)
            try enqueue(sample, range: 0..<1, on: producer)
            try await producer.flush()
            clients.append(producer)
        }
        let share = (records + producers - 1) / producers
        let records = records
        let bulkPartitions = bulkPartitions
        let started = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, producer) in clients.enumerated() {
                group.addTask {
                    let range = (index * share)..<min(records, (index + 1) * share)
                    let partition = bulkPartitions.lowerBound + Int32(index) % Int32(bulkPartitions.count)
                    try await BlockingThreads.run(name: "herald.bench.ceiling") {
                        try enqueue(sample, range: range, partition: partition, on: producer)
                    }
                    try await producer.flush(timeout: .seconds(120))
                }
            }
            try await group.waitForAll()
        }
        let seconds = (ContinuousClock.now - started).seconds
        for producer in clients { await producer.shutdown(flushTimeout: .seconds(5)) }
        return seconds
    }

    /// Enqueues records `range` (cycling through the sample) without waiting for acks, to
    /// `partition` or, when nil, partitioned by key: the same producer call the fan-out's
    /// hot path makes (a topic handle, the timestamp given once per page of records).
    private func enqueue(_ sample: DeliveryRecordSample, range: Range<Int>, partition: Int32? = nil, on producer: KafkaProducer) throws {
        let topic = try producer.topic(topic)
        var timestampMs: Int64 = 0
        try sample.bytes.withUnsafeBytes { all in
            for index in range {
                if index % 1_000 == 0 { timestampMs = Int64(Date().timeIntervalSince1970 * 1_000) }
                let record = index % sample.count
                let bounds = sample.range(record)
                try sample.keys[record].withUnsafeBytes { key in
                    try producer.enqueue(
                        to: topic, partition: partition, key: key, value: UnsafeRawBufferPointer(rebasing: all[bounds]),
                        timestampMs: timestampMs
                    )
                }
            }
        }
    }
}
