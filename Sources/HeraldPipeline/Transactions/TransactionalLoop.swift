import Foundation
import HeraldKafka
import Logging
import Synchronization

/// Consume, transform, produce, exactly once: the loop both roles run.
///
/// Each polled batch is handled inside one Kafka transaction together with the batch's
/// consumer offsets (`sendOffsetsToTransaction` with the consumer's group metadata, sent while
/// the batch is handled), so the records a batch produced and the fact that it was consumed
/// become visible together or not at all. When anything fails the transaction is aborted and the consumer is recreated, which
/// rewinds it to the group's committed offsets: the batch is done again from the start.
///
/// Transactions are only open between two polls, and librdkafka only serves rebalances inside
/// a poll, so a revocation never meets an open transaction of this loop. A member that lost its
/// partitions while working (a session timeout) is fenced at commit time and aborts.
final class TransactionalLoop: Sendable {
    struct Settings: Sendable {
        var name: String
        var topics: [String]
        var consumer: KafkaConsumerConfiguration
        var producer: KafkaProducerConfiguration
        var batchSize: Int
        var pollTimeout: Duration = .milliseconds(100)
        var lagSampleInterval: Duration = .seconds(15)
        /// Where the loop passes through the `TransactionGate`: the whole transaction (short
        /// ones: the planner, express lanes), or only `BatchWork.finish` and the commit (bulk
        /// lanes, whose deliveries go to partitions no other lane writes).
        var gated: GatedPart = .wholeTransaction
        var gate: TransactionGate = .shared
    }

    enum GatedPart: Sendable { case wholeTransaction, finishAndCommit }

    /// Work to do once the batch's transaction committed (best effort: it is not redone
    /// if the process dies first).
    typealias AfterCommit = @Sendable () async -> Void

    /// What a handled batch leaves to the loop.
    struct BatchWork: Sendable {
        /// Queues the batch's last records, the ones on partitions other transactions of this
        /// process write too; run in the gate, right before the commit.
        var finish: (@Sendable (KafkaProducer) async throws -> Void)?
        var afterCommit: AfterCommit?

        init(finish: (@Sendable (KafkaProducer) async throws -> Void)? = nil, afterCommit: AfterCommit? = nil) {
            self.finish = finish
            self.afterCommit = afterCommit
        }
    }

    /// Handles one batch inside the open transaction; produce with `producer.enqueue`.
    typealias Handler = @Sendable (_ batch: [KafkaMessage], _ producer: KafkaProducer) async throws -> BatchWork

    let settings: Settings
    private let logger: Logger
    private let metrics: PipelineMetrics
    private let stopping = Atomic<Bool>(false)
    private let committedBatches = Atomic<Int>(0)

    init(settings: Settings, logger: Logger, metrics: PipelineMetrics = .shared) {
        self.settings = settings
        self.logger = logger
        self.metrics = metrics
    }

    /// Asks the loop to finish the batch in hand, commit it, leave the group and return.
    func stop() { stopping.store(true, ordering: .releasing) }

    var isStopping: Bool { stopping.load(ordering: .acquiring) }

    /// Batches committed so far (for tests and logs).
    var batchesCommitted: Int { committedBatches.load(ordering: .relaxed) }

    /// Runs until `stop()` or cancellation. Throws only when the clients cannot be created.
    /// - Parameter producerConfiguration: replaces `settings.producer` (a lane decides its
    ///   producer's linger once it knows how it partitions).
    func run(producer producerConfiguration: KafkaProducerConfiguration? = nil, _ handle: Handler) async throws {
        var producer: KafkaProducer?
        var consumer: KafkaConsumer?
        var failures = 0
        var lastLagSample = ContinuousClock.now

        while !isStopping && !Task.isCancelled {
            do {
                if producer == nil {
                    let fresh = try KafkaProducer(configuration: producerConfiguration ?? settings.producer, logger: logger)
                    try await fresh.initTransactions()
                    producer = fresh
                }
                if consumer == nil {
                    let fresh = try KafkaConsumer(configuration: settings.consumer, logger: logger)
                    try fresh.subscribe(topics: settings.topics)
                    consumer = fresh
                }
            } catch {
                metrics.countError(error)
                failures += 1
                logger.error("\(settings.name): cannot create Kafka clients: \(error)")
                if failures > 20 {
                    await producer?.shutdown(flushTimeout: .seconds(1))
                    throw error
                }
                try? await Task.sleep(for: backoff(failures))
                continue
            }
            guard let activeProducer = producer, let activeConsumer = consumer else { continue }

            let batch: [KafkaMessage]
            do {
                batch = try await activeConsumer.pollBatch(maxMessages: settings.batchSize, timeout: settings.pollTimeout)
            } catch {
                metrics.countError(error)
                logger.warning("\(settings.name): poll failed: \(error)")
                try? await Task.sleep(for: .milliseconds(100))
                continue
            }
            if ContinuousClock.now - lastLagSample >= settings.lagSampleInterval {
                lastLagSample = .now
                sampleLag(activeConsumer)
            }
            guard !batch.isEmpty else { continue }

            do {
                let started = ContinuousClock.now
                let gate = settings.gate
                var (timings, afterCommit) = try await settings.gated == .wholeTransaction
                    ? gate.pass { try await transact(batch, activeProducer, activeConsumer, handle, gatedFrom: nil) }
                    : transact(batch, activeProducer, activeConsumer, handle, gatedFrom: gate)
                if settings.gated == .wholeTransaction { timings.gateWait = timings.began - started }
                committedBatches.add(1, ordering: .relaxed)
                await afterCommit?()
                failures = 0
                logger.debug("\(settings.name): batch committed", metadata: [
                    "records": "\(batch.count)",
                    "gateWaitMs": "\(Self.milliseconds(timings.gateWait))",
                    "handleMs": "\(Self.milliseconds(timings.handled - timings.began))",
                    "offsetsMs": "\(Self.milliseconds(timings.offsetsSent - timings.handled))",
                    "commitMs": "\(Self.milliseconds(timings.committed - timings.finishing))",
                ])
            } catch {
                metrics.countError(error)
                failures += 1
                logger.error("\(settings.name): batch of \(batch.count) failed, aborting and rewinding: \(error)")
                do {
                    try await activeProducer.abortTransaction()
                } catch {
                    logger.warning("\(settings.name): abort failed, recreating the producer: \(error)")
                    await activeProducer.shutdown(flushTimeout: .seconds(1))
                    producer = nil
                }
                if let kafkaError = error as? KafkaError, kafkaError.isFatal, producer != nil {
                    await activeProducer.shutdown(flushTimeout: .seconds(1))
                    producer = nil
                }
                // A new consumer starts again from the group's committed offsets.
                try? await activeConsumer.close()
                consumer = nil
                try? await Task.sleep(for: backoff(failures))
            }
        }
        if let consumer {
            do { try await consumer.close() } catch { logger.warning("\(settings.name): leaving the group failed: \(error)") }
        }
        if let producer {
            await producer.shutdown(flushTimeout: .seconds(10))
        }
        producer = nil
        logger.info("\(settings.name): stopped", metadata: ["batches": "\(batchesCommitted)"])
    }

    private struct Timings: Sendable {
        var began: ContinuousClock.Instant
        var handled: ContinuousClock.Instant
        /// When the offsets, sent while the batch was handled, were in (at or after `handled`).
        var offsetsSent: ContinuousClock.Instant
        /// When `finish` started, in the gate.
        var finishing: ContinuousClock.Instant
        var committed: ContinuousClock.Instant
        /// Time spent waiting for the gate.
        var gateWait: Duration
    }

    /// One batch's transaction: begin, handle, offsets, finish, commit. With `gatedFrom`,
    /// `finish` and the commit pass through that gate (otherwise the caller holds it).
    private func transact(
        _ batch: [KafkaMessage], _ producer: KafkaProducer, _ consumer: KafkaConsumer, _ handle: Handler,
        gatedFrom gate: TransactionGate?
    ) async throws -> (Timings, AfterCommit?) {
        let began = ContinuousClock.now
        try producer.beginTransaction()
        // The offsets' two round trips (AddOffsetsToTxn, TxnOffsetCommit) run while the batch
        // is handled: a transaction may add its offsets before, between or after its records.
        // Leaving this scope by a throw waits for them, so an abort never overlaps them.
        let offsets = Self.nextOffsets(batch)
        let groupMetadata = try consumer.groupMetadata()
        async let offsetsAdded: Void = producer.sendOffsetsToTransaction(offsets, groupMetadata: groupMetadata)
        let work = try await handle(batch, producer)
        let handled = ContinuousClock.now
        try await offsetsAdded
        let offsetsSent = ContinuousClock.now
        let finishAndCommit = { @Sendable () async throws -> (ContinuousClock.Instant, ContinuousClock.Instant) in
            let entered = ContinuousClock.now
            try await work.finish?(producer)
            // Wait for the acknowledgements here, in short steps: the commit's own flush would
            // notice the last one up to 10 ms late. The commit then ends the transaction at once.
            try await producer.flush()
            try await producer.commitTransaction()
            return (entered, ContinuousClock.now)
        }
        let (finishing, committed) = if let gate { try await gate.pass(finishAndCommit) } else { try await finishAndCommit() }
        let timings = Timings(
            began: began, handled: handled, offsetsSent: offsetsSent, finishing: finishing, committed: committed,
            gateWait: finishing - offsetsSent
        )
        return (timings, work.afterCommit)
    }

    /// For each partition in the batch, the offset after its last record.
    static func nextOffsets(_ batch: [KafkaMessage]) -> [KafkaTopicPartitionOffset] {
        var next: [KafkaTopicPartition: Int64] = [:]
        for message in batch {
            next[message.topicPartition] = max(next[message.topicPartition] ?? 0, message.offset + 1)
        }
        return next.sorted { $0.key < $1.key }.map {
            KafkaTopicPartitionOffset(topic: $0.key.topic, partition: $0.key.partition, offset: $0.value)
        }
    }

    private static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1_000 + duration.components.attoseconds / 1_000_000_000_000_000
    }

    private func backoff(_ failures: Int) -> Duration {
        .milliseconds(min(5_000, 100 * (1 << min(failures, 6))))
    }

    private func sampleLag(_ consumer: KafkaConsumer) {
        let metrics = metrics
        Task {
            guard let lags = try? await consumer.lag() else { return }
            var byTopic: [String: Int64] = [:]
            for lag in lags { byTopic[lag.partition.topic, default: 0] += lag.lag }
            for (topic, lag) in byTopic { metrics.consumerLag(topic).record(lag) }
        }
    }
}
