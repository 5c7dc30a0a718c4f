import HeraldDomain
import Foundation
import HeraldKafka
import HeraldRegistry
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
/// A failure is classified (`FailureKind`). A transient one (broker, Redis, timeouts) rewinds
/// and retries with backoff for as long as it lasts. A permanent one is the input's fault: the
/// record at fault is dead-lettered, with its reason, in a transaction that also commits its
/// offset and delivers the rest of its batch; when the error does not name the record, the
/// batch is handled one record per transaction to find it. No record is retried forever.
///
/// After every abort the transactional producer is replaced: a new instance fences the old one,
/// so the aborted transaction's offsets can never be committed by a later one.
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
        /// How long an idle poll waits. A record ends the wait at once, and so do `stop()` and a
        /// direct-read notice (`KafkaConsumer.wake`), so this only sets how often an idle loop
        /// wakes to report that it keeps up (`ProgressBoard`) and to sample lag: rarely, which
        /// is what an idle worker costs.
        var pollTimeout: Duration = .seconds(2)
        var lagSampleInterval: Duration = .seconds(15)
        /// Where the loop passes through the `TransactionGate`: the whole transaction (short
        /// ones: the planner, express lanes), or only `BatchWork.finish` and the commit (bulk
        /// lanes, whose deliveries go to partitions no other lane writes).
        var gated: GatedPart = .wholeTransaction
        /// The worker's (`WorkerContext`); a loop of its own gets one of its own.
        var gate = TransactionGate()
        /// Where records that fail permanently go; nil retries them like transient failures.
        var deadLetterTopic: String? = nil
        /// Where the loop reports whether it keeps up (health checks).
        var progress = ProgressBoard()
        /// Reads of partitions a planner of this process has just written to, when the group
        /// consumer has nothing (bulk lanes); a notice wakes the loop's waiting poll.
        var directReads: DirectReads.Settings? = nil
        /// Partitions whose records go first (the sender: the express lanes' deliveries, which
        /// breaking and one-user events write): while polls bring records of them, the loop's
        /// other partitions of that topic are paused, and resumed once a poll brings none.
        var firstPartitions: FirstPartitions? = nil
    }

    struct FirstPartitions: Sendable {
        var topic: String
        var partitions: Range<Int32>

        func contains(_ message: KafkaMessage) -> Bool { message.topic == topic && partitions.contains(message.partition) }
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
    private let deadLettered = Atomic<Int>(0)
    private let directRecords = Atomic<Int>(0)
    private let broughtAgain = Atomic<Int>(0)
    /// The group consumer polling now, for `stop()` and notices to wake.
    private let polling = Mutex<KafkaConsumer?>(nil)

    init(settings: Settings, logger: Logger, metrics: PipelineMetrics) {
        self.settings = settings
        var logger = logger
        logger[metadataKey: "loop"] = "\(settings.name)"
        self.logger = logger
        self.metrics = metrics
    }

    /// Asks the loop to finish the batch in hand, commit it, leave the group and return.
    func stop() {
        stopping.store(true, ordering: .releasing)
        polling.withLock { $0 }?.wake()
    }

    var isStopping: Bool { stopping.load(ordering: .acquiring) }

    /// Batches committed so far (for tests and logs).
    var batchesCommitted: Int { committedBatches.load(ordering: .relaxed) }

    /// Records read at a notice beside the group consumer (`DirectReads`) so far.
    var recordsReadDirectly: Int { directRecords.load(ordering: .relaxed) }

    /// Records the group consumer brought after this loop had handled and committed them
    /// (read directly), dropped so far.
    var recordsBroughtAgain: Int { broughtAgain.load(ordering: .relaxed) }

    /// Records dead-lettered by the loop itself (permanent failures) so far.
    var recordsDeadLettered: Int { deadLettered.load(ordering: .relaxed) }

    /// Runs until `stop()` or cancellation. Throws only when the clients cannot be created.
    /// - Parameter producerConfiguration: replaces `settings.producer` (a lane decides its
    ///   producer's linger once it knows how it partitions).
    func run(producer producerConfiguration: KafkaProducerConfiguration? = nil, _ handle: @escaping Handler) async throws {
        var clients = Clients(producerConfiguration: producerConfiguration ?? settings.producer)
        var machine = TransactionalLoopStateMachine()
        var lastLagSample = ContinuousClock.now
        let progress = settings.progress.register(settings.name)
        defer { settings.progress.unregister(progress) }
        let direct = settings.directReads.map { DirectReads(settings: $0, logger: logger) }
        if let direct {
            do { try direct.prepare() } catch { logger.warning("no consumer for direct reads yet", metadata: ["error": "\(error)"]) }
        }
        let listening = direct?.settings.notices.listen { [self] in polling.withLock { $0 }?.wake() }
        defer {
            if let listening { direct?.settings.notices.stopListening(listening) }
            polling.withLock { $0 = nil }
        }

        while !isStopping && !Task.isCancelled {
            guard try await open(&clients, &machine), clients.producer != nil, let consumer = clients.consumer else { continue }
            guard
                let batch = await nextBatch(
                    consumer, &clients, idle: machine.isBatchDone, direct: direct, progress: progress, lastLagSample: &lastLagSample)
            else { continue }
            progress.holding()
            machine.received(batch)
            while let part = machine.nextPart, let producer = clients.producer {
                await commit(part, producer, consumer, &clients, &machine, direct: direct, progress: progress, handle)
            }
            if machine.isBatchDone { progress.caughtUp() }
        }
        await direct?.close()
        if let consumer = clients.consumer {
            do { try await consumer.close() } catch { logger.warning("leaving the group failed", metadata: ["error": "\(error)"]) }
        }
        if let producer = clients.producer {
            await producer.shutdown(flushTimeout: .seconds(10))
        }
        logger.info("stopped", metadata: ["batches": "\(batchesCommitted)"])
    }

    /// The clients the loop holds between batches; either is nil until it could be created again.
    private struct Clients {
        let producerConfiguration: KafkaProducerConfiguration
        var producer: KafkaProducer?
        var consumer: KafkaConsumer?
        /// The partitions paused for `firstPartitions`.
        var paused: [KafkaTopicPartition] = []
    }

    /// Creates the clients that are missing: true when both exist, false after waiting to try
    /// again; throws when the state machine gives up.
    private func open(_ clients: inout Clients, _ machine: inout TransactionalLoopStateMachine) async throws -> Bool {
        do {
            if clients.producer == nil {
                let fresh = try KafkaProducer(configuration: clients.producerConfiguration, logger: logger)
                try await fresh.initTransactions()
                clients.producer = fresh
            }
            if clients.consumer == nil {
                let fresh = try KafkaConsumer(configuration: settings.consumer, logger: logger)
                try fresh.subscribe(topics: settings.topics)
                clients.consumer = fresh
                clients.paused = []
                polling.withLock { $0 = fresh }
            }
            return true
        } catch {
            metrics.countError(error)
            logger.error("cannot create Kafka clients", metadata: ["error": "\(error)"])
            switch machine.clientsFailed() {
            case .giveUp:
                await clients.producer?.shutdown(flushTimeout: .seconds(1))
                throw error
            case .retry(let delay):
                try? await Task.sleep(for: delay)
                return false
            }
        }
    }

    /// The next records to handle: polled (and the group's state, lag and first partitions
    /// seen to), less those already handled at a notice, or else read at one; nil when there
    /// are none (the loop has caught up) or the poll failed.
    private func nextBatch(
        _ consumer: KafkaConsumer, _ clients: inout Clients, idle: Bool, direct: DirectReads?, progress: ProgressBoard.Entry,
        lastLagSample: inout ContinuousClock.Instant
    ) async -> [KafkaMessage]? {
        var batch: [KafkaMessage]
        do {
            batch = try await consumer.pollBatch(maxMessages: settings.batchSize, timeout: settings.pollTimeout)
        } catch {
            metrics.countError(error)
            logger.warning("poll failed", metadata: ["error": "\(error)"])
            try? await Task.sleep(for: .milliseconds(100))
            return nil
        }
        // A group that does not form leaves the records on these topics unread however idle
        // the loop looks: health reports the wait. librdkafka keeps rejoining by itself; a
        // new consumer would not help (measured on the embedded broker: a vanished leader
        // is dropped when its session ends, and a consumer closed meanwhile only adds a
        // member that holds partitions until its own session ends).
        progress.waitingForPartitions(consumer.membership.waiting())
        if ContinuousClock.now - lastLagSample >= settings.lagSampleInterval {
            lastLagSample = .now
            sampleLag(consumer, idle: batch.isEmpty && idle)
        }
        if let first = settings.firstPartitions { clients.paused = putFirst(first, batch: batch, paused: clients.paused, consumer) }
        if let direct {
            let brought = batch.count
            batch = direct.unhandled(batch)
            if batch.count < brought { broughtAgain.add(brought - batch.count, ordering: .relaxed) }
            if batch.isEmpty { batch = await readDirectly(direct, consumer).map { [$0] } ?? [] }
        }
        guard !batch.isEmpty else {
            progress.caughtUp()
            return nil
        }
        return batch
    }

    /// Commits one part of the batch in hand, and on failure does what the state machine says:
    /// rewind (to the committed offsets, or with a new consumer), dead-letter, or isolate.
    private func commit(
        _ part: TransactionalLoopStateMachine.Part, _ producer: KafkaProducer, _ consumer: KafkaConsumer, _ clients: inout Clients,
        _ machine: inout TransactionalLoopStateMachine, direct: DirectReads?, progress: ProgressBoard.Entry, _ handle: @escaping Handler
    ) async {
        do {
            try await commit(part.work, deadLetters: part.deadLetters, offsetsOf: part.records, producer, consumer, handle)
            direct?.committed(part.records)
            let letters = machine.partCommitted()
            deadLettered.add(letters.count, ordering: .relaxed)
            for letter in letters {
                metrics.deadLetters(letter.reason).increment()
                logger.error(
                    "record dead-lettered",
                    metadata: [
                        "reason": "\(letter.reason)",
                        "source": "\(letter.sourceTopic)/\(letter.sourcePartition)/\(letter.sourceOffset)",
                        "error": "\(letter.message)",
                    ])
            }
        } catch {
            metrics.countError(error)
            await abortAndReplace(
                &clients.producer, configuration: clients.producerConfiguration, after: error, records: part.records.count)
            let canDeadLetter = settings.deadLetterTopic != nil && clients.producer != nil
            switch machine.partFailed(error, canDeadLetter: canDeadLetter, now: Date()) {
            case .rewind(let delay, let seek):
                // Waiting for the index to be rebuilt is not this worker's stall: it must
                // not be restarted by its liveness probe (readiness says not ready).
                if error is IndexNotReady { progress.caughtUp() }
                var rewound = false
                if seek { rewound = (try? await consumer.rewindToCommitted()) != nil }
                if !rewound {
                    try? await consumer.close()
                    clients.consumer = nil
                    polling.withLock { $0 = nil }
                }
                try? await Task.sleep(for: delay)
            case .deadLetter:
                break
            case .isolate(let records):
                logger.warning(
                    "a batch failed permanently; handling its records one by one",
                    metadata: ["records": "\(records)", "error": "\(error)"])
            }
        }
    }

    /// Handles `work` and writes `deadLetters` in one transaction with the offsets of every
    /// record of `part` (`work` and the dead-lettered ones); logs the timings.
    private func commit(
        _ work: [KafkaMessage], deadLetters: [DeadLetter], offsetsOf part: [KafkaMessage],
        _ producer: KafkaProducer, _ consumer: KafkaConsumer, _ handle: @escaping Handler
    ) async throws {
        let started = ContinuousClock.now
        let topic = settings.deadLetterTopic
        let handleWithLetters: Handler = { batch, producer in
            if let topic {
                for letter in deadLetters { try producer.enqueue(letter.outgoing(topic: topic)) }
            }
            return batch.isEmpty ? BatchWork() : try await handle(batch, producer)
        }
        let gate = settings.gate
        var (timings, afterCommit) =
            try await settings.gated == .wholeTransaction
            ? gate.pass { try await transact(work, offsetsOf: part, producer, consumer, handleWithLetters, gatedFrom: nil) }
            : transact(work, offsetsOf: part, producer, consumer, handleWithLetters, gatedFrom: gate)
        if settings.gated == .wholeTransaction { timings.gateWait = timings.began - started }
        committedBatches.add(1, ordering: .relaxed)
        await afterCommit?()
        logger.debug(
            "batch committed",
            metadata: [
                "records": "\(part.count)",
                "gateWaitMs": "\(timings.gateWait.wholeMilliseconds)",
                "handleMs": "\((timings.handled - timings.began).wholeMilliseconds)",
                "offsetsMs": "\((timings.offsetsSent - timings.handled).wholeMilliseconds)",
                "commitMs": "\((timings.committed - timings.finishing).wholeMilliseconds)",
            ])
    }

    /// Aborts the failed transaction and replaces the producer, so nothing of the aborted
    /// transaction (its offsets above all) can ride on a later commit of the same instance.
    private func abortAndReplace(
        _ producer: inout KafkaProducer?, configuration: KafkaProducerConfiguration, after error: any Error, records: Int
    ) async {
        guard let failed = producer else { return }
        logger.error("batch failed, aborting and rewinding", metadata: ["records": "\(records)", "error": "\(error)"])
        if !failed.isAbandoned {
            do {
                try await failed.abortTransaction()
            } catch {
                logger.warning("abort failed", metadata: ["error": "\(error)"])
            }
        }
        await failed.shutdown(flushTimeout: .seconds(1))
        producer = nil
        do {
            let fresh = try KafkaProducer(configuration: configuration, logger: logger)
            try await fresh.initTransactions()
            producer = fresh
        } catch {
            metrics.countError(error)
            logger.warning("cannot replace the producer yet", metadata: ["error": "\(error)"])
        }
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
        _ batch: [KafkaMessage], offsetsOf part: [KafkaMessage], _ producer: KafkaProducer, _ consumer: KafkaConsumer, _ handle: Handler,
        gatedFrom gate: TransactionGate?
    ) async throws -> (Timings, AfterCommit?) {
        let began = ContinuousClock.now
        try producer.beginTransaction()
        // The offsets' two round trips (AddOffsetsToTxn, TxnOffsetCommit) run while the batch
        // is handled: a transaction may add its offsets before, between or after its records.
        // Leaving this scope by a throw waits for them, so an abort never overlaps them.
        let offsets = Self.nextOffsets(part)
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

    /// Pauses the other partitions of `first.topic` when `batch` holds a record of `first`, and
    /// resumes them (those still assigned) once a batch holds none; returns what is paused. A
    /// failure is logged and leaves every partition fetching: the order is a preference, the
    /// records are read either way.
    private func putFirst(
        _ first: FirstPartitions, batch: [KafkaMessage], paused: [KafkaTopicPartition], _ consumer: KafkaConsumer
    ) -> [KafkaTopicPartition] {
        let urgent = batch.contains(where: first.contains)
        do {
            if urgent, paused.isEmpty {
                let others = try consumer.assignment().filter { $0.topic == first.topic && !first.partitions.contains($0.partition) }
                try consumer.pause(others)
                return others
            }
            if !urgent, !paused.isEmpty {
                let assigned = Set(try consumer.assignment())
                try consumer.resume(paused.filter(assigned.contains))
                return []
            }
        } catch {
            metrics.countError(error)
            logger.warning("cannot pause or resume partitions to read the first ones first", metadata: ["error": "\(error)"])
            if !paused.isEmpty { try? consumer.resume(paused) }
            return []
        }
        return paused
    }

    /// A noticed partition's next record read beside the group consumer (nil: none, or the
    /// read failed and the group consumer will bring it).
    private func readDirectly(_ direct: DirectReads, _ consumer: KafkaConsumer) async -> KafkaMessage? {
        let started = ContinuousClock.now
        do {
            guard let record = try await direct.next(owner: consumer) else { return nil }
            metrics.directTaskReads.increment()
            directRecords.add(1, ordering: .relaxed)
            logger.debug(
                "record read directly",
                metadata: [
                    "record": "\(record.topic)/\(record.partition)/\(record.offset)",
                    "readMs": "\((ContinuousClock.now - started).wholeMilliseconds)",
                ])
            return record
        } catch {
            metrics.countError(error)
            logger.warning("direct read failed; the group consumer will bring the record", metadata: ["error": "\(error)"])
            return nil
        }
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

    /// Records the group's lag per topic; `idle`: the loop holds nothing uncommitted, so the
    /// markers after its last commit are not counted as work.
    private func sampleLag(_ consumer: KafkaConsumer, idle: Bool) {
        let metrics = metrics
        Task {
            guard let lags = try? await consumer.lag() else { return }
            var byTopic: [String: Int64] = [:]
            for lag in lags { byTopic[lag.partition.topic, default: 0] += idle ? lag.lagWhenIdle : lag.lag }
            for (topic, lag) in byTopic { metrics.consumerLag(topic).record(lag) }
        }
    }
}
