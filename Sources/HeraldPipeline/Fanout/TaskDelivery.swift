import Foundation
import HeraldDomain
import HeraldKafka
import HeraldRedis
import Logging
import HeraldStreams
import Synchronization

/// Delivers batches of fan-out tasks inside the caller's open transaction: runs each task
/// (`TaskExecutor`), queues its `TaskProgress` and, for the event's last task, the final
/// `completed` status, and hands back the Redis status writes to do once the transaction
/// committed. Owns a Redis connection and a thread for the blocking hot path.
///
/// Fan-out lanes use one each; the planner uses one to deliver narrow events itself
/// (`PipelineConfiguration.plannerDeliversNarrowEvents`), saving them a hop through
/// `herald.tasks.express`.
final class TaskDelivery: Sendable {
    let lane: TaskLane
    private let configuration: PipelineConfiguration
    private let executor: TaskExecutor
    private let redis: RedisConnection
    /// The connection the executor streams the slots' packs on (`TaskExecutor`).
    private let packReader: RedisConnection
    private let queue: DispatchQueue
    private let logger: Logger
    private let metrics: PipelineMetrics
    /// The worker's: express work enters it, bulk lanes step aside in it.
    private let gate: ExpressGate
    /// When this lane last renewed its signal of a breaking alert (`signalBreaking`).
    private let breakingSignalled = Mutex<ContinuousClock.Instant?>(nil)
    /// This lane's field of `SlotLayout.breakingKey`: `<instance id>/<lane>`.
    private let signalField: String

    init(
        lane: TaskLane, name: String, configuration: PipelineConfiguration, templates: TemplateCache, gate: ExpressGate, logger: Logger,
        metrics: PipelineMetrics
    ) {
        self.lane = lane
        self.gate = gate
        self.configuration = configuration
        self.logger = logger
        self.metrics = metrics
        signalField = configuration.instanceId + "/" + name
        redis = RedisConnection(configuration: configuration.redis, logger: logger)
        packReader = RedisConnection(configuration: configuration.redis, logger: logger)
        queue = DispatchQueue(label: "herald.\(name)")
        executor = TaskExecutor(
            configuration: configuration, redis: redis, packReader: packReader, templates: templates,
            gate: lane == .bulk ? gate : nil, logger: logger, metrics: metrics
        )
    }

    /// Looks up which deliveries partitions this lane writes; call once before delivering.
    func prepare() async {
        executor.deliveryPartitions = await deliveryPartitions()
    }

    /// True once `prepare` found the lane's deliveries partitions: each transaction then
    /// writes one partition (`TaskExecutor.choosePartition`); otherwise records are
    /// partitioned by key.
    var writesOnePartitionPerTask: Bool { executor.deliveryPartitions != nil }

    func close() {
        redis.close()
        packReader.close()
    }

    /// Delivers `tasks` with `producer`, whose transaction is open. Express work makes the
    /// bulk lanes of this process step aside while it runs (`ExpressGate`).
    ///
    /// The deliveries are queued here. The status records (the tasks' progress and the
    /// event's `completed` status) go to the partition of `herald.status` that every lane of
    /// the event writes: a bulk lane leaves them to the returned work's `finish`, which the
    /// loop runs in the `TransactionGate` right before the commit, after the lane's deliveries
    /// are acknowledged, so the gated part is only the status records and the commit. Express
    /// work (whose whole transaction is gated) queues them at once.
    ///
    /// - Parameter source: the task topic partition the tasks came from (bulk lanes), which
    ///   decides the deliveries partition (`TaskExecutor.choosePartition`).
    func deliver(_ tasks: [FanoutTask], source: Int32? = nil, producer: KafkaProducer) async throws -> TransactionalLoop.BatchWork {
        guard !tasks.isEmpty else { return TransactionalLoop.BatchWork() }
        // A breaking event's tasks make the bulk lanes wait until they are done, not only a moment.
        let breaking = lane == .express && tasks.contains { $0.event.urgency == .breaking }
        if lane == .express { gate.enter(breaking: breaking) }
        defer { if lane == .express { gate.leave(breaking: breaking) } }
        // A correction's audience is read from `herald.deliveries` first, off the lane's thread.
        var audiences: [Int: CorrectionAudience] = [:]
        for (index, task) in tasks.enumerated() {
            guard let correction = task.correction, let original = task.event.id else { continue }
            audiences[index] = try await CorrectionAudience.read(
                original: original, hub: task.event.hub, partition: correction.partition, since: correction.since, until: task.plannedAt,
                configuration: configuration, logger: logger)
        }
        let outcome = try await onLaneThread { [audiences] in
            try self.process(tasks, source: source, audiences: audiences, producer: producer)
        }
        var work = TransactionalLoop.BatchWork()
        let messages = outcome.messages
        if lane == .bulk {
            try await producer.flush()
            work.finish = { producer in
                for message in messages { try producer.enqueue(message) }
            }
        } else {
            for message in messages { try producer.enqueue(message) }
        }
        let statuses = outcome.statuses
        if !statuses.isEmpty {
            // After the commit, so `GET /v1/notifications/{id}` never reports deliveries a
            // `read_committed` consumer cannot see yet.
            work.afterCommit = { await self.onLaneThreadIgnoringErrors { try self.writeStatuses(statuses) } }
        }
        return work
    }

    /// Express lanes write the first `expressDeliveryPartitions` partitions of the deliveries
    /// topic, bulk lanes the rest (see `PipelineConfiguration.expressDeliveryPartitions`).
    private func deliveryPartitions() async -> Range<Int32>? {
        let reserved = Int32(configuration.expressDeliveryPartitions)
        guard reserved > 0 else { return nil }
        var admin = KafkaAdminConfiguration(bootstrapServers: configuration.bootstrapServers)
        admin.extra = configuration.kafkaExtra
        guard let topics = try? await KafkaAdmin(configuration: admin, logger: logger).listTopics(),
            let count = topics[configuration.topics.deliveries].map(Int32.init), count > reserved
        else {
            logger.notice("deliveries topic too small to reserve express partitions; partitioning by key")
            return nil
        }
        if lane == .bulk, let tasks = topics[configuration.topics.tasks], tasks > count - reserved {
            logger.notice(
                "deliveries topic has fewer bulk partitions than the tasks topic: two lanes may write one deliveries partition at a time, and on brokers that resolve overlapping transactions late (Tansu) hide each other's deliveries until both are idle",
                metadata: [
                    "deliveriesPartitions": "\(count)", "expressPartitions": "\(reserved)", "taskPartitions": "\(tasks)",
                    "advice": "give \(configuration.topics.deliveries) at least \(Int32(tasks) + reserved) partitions",
                ])
        }
        return lane == .express ? 0..<reserved : reserved..<count
    }

    /// What `process` leaves to do: the status records to queue in the gate, the statuses to
    /// store in Redis once the transaction committed.
    private struct Outcome: Sendable {
        var messages: [KafkaOutgoingMessage] = []
        var statuses: [StatusRecord] = []
    }

    /// Tells the deployment's registration writers that this lane runs a breaking alert's
    /// tasks, so they wait (`AlertYield`) instead of taking the cores, Redis and the broker from
    /// the alert: the lane's field of `SlotLayout.breakingKey` holds when the signal ends
    /// (milliseconds since 1970, `breakingSignalMilliseconds` ahead), renewed before a task once
    /// a third of that has passed, and shortened when the lane's batch is done
    /// (`endBreakingSignal`). A failure is logged; the alert goes on without it.
    private func signalBreaking() {
        let milliseconds = configuration.breakingSignalMilliseconds
        guard milliseconds > 0 else { return }
        let now = ContinuousClock.now
        let due = breakingSignalled.withLock { last -> Bool in
            if let last, last.duration(to: now) < .milliseconds(milliseconds / 3) { return false }
            last = now
            return true
        }
        guard due else { return }
        gate.countBreakingSignal()
        let until = BreakingSignal.until(after: milliseconds)
        let key = configuration.layout.breakingKey
        do {
            for reply in try redis.pipelineBlocking([
                RedisCommand("HSET", key, signalField, String(until)), RedisCommand("PEXPIRE", key, String(milliseconds)),
            ]) {
                _ = try reply.get()
            }
        } catch {
            logger.warning("could not signal a breaking alert to registration writers", metadata: ["error": "\(error)"])
        }
    }

    /// Shortens this lane's signal, if it set one, to `breakingSignalLingerMilliseconds` from
    /// now: the next batch of the alert's tasks renews it, and once none comes the writers go on
    /// a moment later.
    private func endBreakingSignal() {
        guard
            breakingSignalled.withLock({ last in
                defer { last = nil }
                return last != nil
            })
        else { return }
        let until = BreakingSignal.until(after: configuration.breakingSignalLingerMilliseconds)
        do {
            _ = try redis.sendBlocking(RedisCommand("HSET", configuration.layout.breakingKey, signalField, String(until)))
        } catch {
            logger.warning("could not end the breaking alert's signal; it ends on its own", metadata: ["error": "\(error)"])
        }
    }

    /// Runs on the lane's thread: blocking Redis calls and producer enqueues, no awaits.
    private func process(_ tasks: [FanoutTask], source: Int32?, audiences: [Int: CorrectionAudience], producer: KafkaProducer) throws
        -> Outcome
    {
        executor.choosePartition(source: source)
        var outcome = Outcome()
        // The batch's breaking tasks are done (or failed): registration writers go on.
        defer { endBreakingSignal() }
        for (index, task) in tasks.enumerated() {
            if lane == .express && task.event.urgency == .breaking { signalBreaking() }
            var log = logger
            log[metadataKey: "eventId"] = "\(task.eventId)"
            let progress: TaskProgress
            do {
                progress = try executor.run(task, producer: producer, audience: audiences[index])
            } catch {
                metrics.countError(error)
                throw error
            }
            metrics.tasks.increment()
            let layout = configuration.layout.hub(task.event.hub)
            outcome.messages.append(StatusCoding.message(progress, hub: task.event.hub, topic: configuration.topics.status))
            let reply = try redis.evalScriptBlocking(
                StatusScripts.recordProgress, keys: [layout.progressKey(eventId: task.eventId)],
                arguments: ProgressSnapshot.arguments(for: progress, ttlSeconds: configuration.statusTTLSeconds)
            )
            let snapshot = try ProgressSnapshot(reply: reply)
            let record = snapshot.statusRecord(
                eventId: task.eventId, hub: task.event.hub, taskCount: task.taskCount, publishedAt: task.event.publishedAt,
                acceptedAt: task.plannedAt
            )
            if snapshot.completedBy == task.taskIndex {
                // The claim rides on the final record too: it is the one compaction keeps.
                let claim = try redis.sendBlocking(.get(layout.eventClaimKey(eventId: task.eventId))).string
                outcome.messages.append(StatusCoding.message(record, topic: configuration.topics.status, claim: claim))
                log.info(
                    "event completed",
                    metadata: [
                        "targets": "\(record.targets.total)", "skipped": "\(record.skipped)", "failed": "\(record.failed)",
                        "durationMs": "\(record.timings.durationMs.map(String.init) ?? "-")",
                        "plans": "\(Self.summary(plans: record.plans ?? [:]))",
                    ])
            }
            if record.state == .processing || snapshot.completedBy == task.taskIndex {
                outcome.statuses.append(record)
            }
            log.debug(
                "task done",
                metadata: [
                    "task": "\(task.taskIndex + 1)/\(task.taskCount)", "delivered": "\(progress.delivered.total)",
                    "skipped": "\(progress.skipped)",
                    "plans": "\(Self.summary(plans: progress.plans))",
                ])
        }
        return outcome
    }

    /// Stores statuses at `herald:status:<id>` (never moving one backwards, see `StatusScripts`).
    private func writeStatuses(_ statuses: [StatusRecord]) throws {
        var commands = statuses.map {
            StatusScripts.write($0, layout: configuration.layout, ttlSeconds: configuration.statusTTLSeconds)
        }
        // The deployment's measured speed, which a rehearsal's expected times are drawn from.
        for status in statuses
        where status.state == .completed && !status.isRehearsal && !status.isTest
            && status.targets.total >= StatusReader.throughputMinimum
        {
            guard let milliseconds = status.timings.durationMs, milliseconds > 0 else { continue }
            commands.append(
                .hset(configuration.layout.metaKey, [("throughput", String(Int64(status.targets.total) * 1_000 / milliseconds))]))
        }
        for reply in try redis.pipelineBlocking(commands) { _ = try reply.get() }
    }

    private func onLaneThreadIgnoringErrors(_ work: @escaping @Sendable () throws -> Void) async {
        do {
            try await onLaneThread(work)
        } catch {
            metrics.countError(error)
            logger.warning("storing status in Redis failed", metadata: ["error": "\(error)"])
        }
    }

    private func onLaneThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try work() }) }
        }
    }

    /// Slots by plan for a log line: `scan=30,sets=2`.
    static func summary(plans: [String: Int]) -> String {
        plans.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
    }
}
