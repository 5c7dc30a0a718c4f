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
/// returned, and until a `read_committed` consumer (the same watcher the fan-out figures use)
/// saw the last record; the second is the reference, because every fan-out figure includes
/// that consumer too. Then the same records through idempotent producers without transactions.
struct BrokerCeiling: Sendable {
    typealias Result = BenchmarkReport.Ceiling
    static let eventId = "ceiling"

    let configuration: PipelineConfiguration
    let topic: String
    let partitions: Int
    let records: Int
    let producers: Int
    let transactions: Int
    let population: SeedPopulation
    let meter: CPUMeter
    let logger: Logger

    func run() async throws -> Result {
        let admin = try KafkaAdmin(configuration: {
            var admin = KafkaAdminConfiguration(bootstrapServers: configuration.bootstrapServers)
            admin.extra = configuration.kafkaExtra
            return admin
        }(), logger: logger)
        try await admin.createTopics([KafkaTopicSpec(name: topic, partitions: partitions, replicationFactor: 1)], ignoreExisting: true)
        // The topic is deleted only once every client of it is destroyed: librdkafka 2.16 can
        // crash on its own thread (rd_kafka_metadata_update_op with a NULL topic name) when a
        // topic disappears under a live consumer. `measure` owns every client.
        let result: Result
        do {
            result = try await measure()
        } catch {
            try? await admin.deleteTopics([topic], ignoreMissing: true)
            throw error
        }
        do { try await admin.deleteTopics([topic], ignoreMissing: true) } catch {
            logger.warning("deleting \(topic) failed: \(error)")
        }
        return result
    }

    private func measure() async throws -> Result {
        let sample = try DeliveryRecordSample(
            population: population, event: BenchmarkEvents.broadcast(id: Self.eventId), eventId: Self.eventId,
            count: min(records, min(population.count, 50_000))
        )
        let (transactional, cpu) = try await observedTransactionalRun(sample)
        let idempotent = try await idempotentRun(sample)
        return Result(
            records: records, averageRecordBytes: sample.averageBytes, producers: producers, transactions: transactions,
            partitions: partitions, transactionalSeconds: transactional.committed,
            transactionalPerSecond: Double(records) / transactional.committed,
            observedSeconds: transactional.observed, observedPerSecond: Double(records) / transactional.observed,
            idempotentSeconds: idempotent, idempotentPerSecond: Double(records) / idempotent, cpu: cpu
        )
    }

    /// The transactional run, timed by a reader that is destroyed when this returns.
    private func observedTransactionalRun(
        _ sample: DeliveryRecordSample
    ) async throws -> (times: (committed: Double, observed: Double), cpu: BenchmarkReport.CPUAccount) {
        // The reader of the plain broadcast phases: one throughput consumer (their consumer
        // of the express partitions is paused, see `DeliveryWatcher.readPriorityPartitions`).
        let watcher = try DeliveryWatcher(
            bootstrapServers: configuration.bootstrapServers, topic: topic, partitions: partitions,
            extra: configuration.kafkaExtra, logger: logger
        )
        watcher.start()
        let before = meter.snapshot(workers: [])
        let transactional: (committed: Double, observed: Double)
        do {
            transactional = try await transactionalRun(sample, watcher: watcher)
        } catch {
            await watcher.stop()
            throw error
        }
        let cpu = meter.account(before, meter.snapshot(workers: []))
        await watcher.stop()
        return (transactional, cpu)
    }

    /// Returns the seconds until the last commit returned and until the watcher (a
    /// `read_committed` consumer, like the one the fan-out figures use) saw the last record.
    private func transactionalRun(_ sample: DeliveryRecordSample, watcher: DeliveryWatcher) async throws -> (committed: Double, observed: Double) {
        var clients: [KafkaProducer] = []
        for index in 0..<producers {
            let id = "\(topic)-ceiling-\(index)-\(UUID().uuidString.prefix(6))"
            let producer = try KafkaProducer(configuration: configuration.deliveryProducerConfiguration(clientId: "herald-bench-ceiling", transactionalId: id), logger: logger)
            try await producer.initTransactions()
            // Warm-up transaction: metadata and producer id are fetched outside the timed part.
            try producer.beginTransaction()
            try enqueue(sample, range: 0..<1, on: producer)
            try await producer.commitTransaction()
            clients.append(producer)
        }
        let chunk = (records + transactions - 1) / transactions
        // The fan-out's bulk range: the partitions after the express ones, one per transaction.
        let reserved = partitions > configuration.expressDeliveryPartitions ? configuration.expressDeliveryPartitions : 0
        let bulkPartitions = Int32(reserved)..<Int32(partitions)
        let next = SharedCounter()
        let records = records
        let warmups = clients.count
        _ = try await watcher.waitFor(eventId: Self.eventId, expected: warmups, timeout: .seconds(60))
        let startedAt = Date()
        let started = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for producer in clients {
                group.addTask {
                    while true {
                        let start = next.add(chunk)
                        guard start < records else { return }
                        let transaction = Int32(start / chunk)
                        let partition = bulkPartitions.lowerBound + transaction % Int32(bulkPartitions.count)
                        try producer.beginTransaction()
                        try await BlockingThreads.run(name: "herald.bench.ceiling") {
                            try enqueue(sample, range: start..<min(start + chunk, records), partition: partition, on: producer)
                        }
                        try await producer.commitTransaction()
                    }
                }
            }
            try await group.waitForAll()
        }
        let seconds = (ContinuousClock.now - started).seconds
        let seen = try await watcher.waitFor(eventId: Self.eventId, expected: warmups + records, timeout: .seconds(300))
        for producer in clients { await producer.shutdown(flushTimeout: .seconds(5)) }
        return (seconds, (seen.lastSeen ?? Date()).timeIntervalSince(startedAt))
    }

    private func idempotentRun(_ sample: DeliveryRecordSample) async throws -> Double {
        var clients: [KafkaProducer] = []
        for _ in 0..<producers {
            let producer = try KafkaProducer(configuration: configuration.deliveryProducerConfiguration(clientId: "herald-bench-ceiling", transactionalId: nil), logger: logger)
            try enqueue(sample, range: 0..<1, on: producer)
            try await producer.flush()
            clients.append(producer)
        }
        let share = (records + producers - 1) / producers
        let records = records
        let started = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, producer) in clients.enumerated() {
                group.addTask {
                    let range = (index * share)..<min(records, (index + 1) * share)
                    try await BlockingThreads.run(name: "herald.bench.ceiling") { try enqueue(sample, range: range, on: producer) }
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
