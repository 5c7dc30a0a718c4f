import Foundation
import HeraldDomain
import HeraldKafka
import HeraldRedis
import Logging

/// One consumer of a task topic with its own transactional producer, Redis connection and
/// thread. A fan-out worker runs several: bulk lanes on `herald.tasks` and express lanes on
/// `herald.tasks.express`, so narrow events are served while a broadcast is in progress.
///
/// Everything a batch of tasks emits — deliveries, each task's `TaskProgress`, the final
/// `completed` status — and the batch's task offsets go in one transaction.
final class FanoutLane: Sendable {
    let lane: TaskLane
    let index: Int
    private let configuration: PipelineConfiguration
    private let loop: TransactionalLoop
    private let executor: TaskExecutor
    private let redis: RedisConnection
    private let queue: DispatchQueue
    private let logger: Logger
    private let metrics: PipelineMetrics

    init(kind: TaskLane, index: Int, configuration: PipelineConfiguration, templates: TemplateCache, logger: Logger, metrics: PipelineMetrics = .shared) {
        self.lane = kind
        self.index = index
        self.configuration = configuration
        self.logger = logger
        self.metrics = metrics
        let name = "fanout-\(kind.rawValue)-\(index)"
        redis = RedisConnection(configuration: configuration.redis, logger: logger)
        queue = DispatchQueue(label: "herald.\(name)")
        executor = TaskExecutor(
            configuration: configuration, redis: redis, templates: templates,
            gate: kind == .bulk ? ExpressGate.shared : nil, logger: logger, metrics: metrics
        )
        var producer = configuration.transactionalProducerConfiguration(role: "fanout-\(kind.rawValue)", lane: index, forDeliveries: kind == .bulk)
        if kind == .express { producer.lingerMs = 0 }
        loop = TransactionalLoop(
            settings: TransactionalLoop.Settings(
                name: name,
                topics: [kind == .bulk ? configuration.topics.tasks : configuration.topics.expressTasks],
                consumer: configuration.consumerConfiguration(group: kind == .bulk ? configuration.fanoutGroup : configuration.expressGroup),
                producer: producer,
                batchSize: kind == .bulk ? 1 : configuration.expressBatchSize,
                lagSampleInterval: configuration.lagSampleInterval
            ),
            logger: logger, metrics: metrics
        )
    }

    func stop() { loop.stop() }

    func run() async throws {
        defer { redis.close() }
        executor.deliveryPartitions = await deliveryPartitions()
        try await loop.run { [self] batch, producer in
            let tasks = batch.compactMap(decode)
            guard !tasks.isEmpty else { return nil }
            if lane == .express { ExpressGate.shared.enter() }
            defer { if lane == .express { ExpressGate.shared.leave() } }
            let statuses = try await onLaneThread { try self.process(tasks, producer: producer) }
            guard !statuses.isEmpty else { return nil }
            // After the commit, so `GET /v1/notifications/{id}` never reports deliveries a
            // `read_committed` consumer cannot see yet.
            return { await self.onLaneThreadIgnoringErrors { try self.writeStatuses(statuses) } }
        }
    }

    /// Express lanes write the first `expressDeliveryPartitions` partitions of the deliveries
    /// topic, bulk lanes the rest (see `PipelineConfiguration.expressDeliveryPartitions`).
    private func deliveryPartitions() async -> Range<Int32>? {
        let reserved = Int32(configuration.expressDeliveryPartitions)
        guard reserved > 0 else { return nil }
        var admin = KafkaAdminConfiguration(bootstrapServers: configuration.bootstrapServers)
        admin.extra = configuration.kafkaExtra
        guard let topics = try? await KafkaAdmin(configuration: admin, logger: logger).listTopics(),
              let count = topics[configuration.topics.deliveries].map(Int32.init), count > reserved else {
            logger.notice("deliveries topic too small to reserve express partitions; partitioning by key")
            return nil
        }
        return lane == .express ? 0..<reserved : reserved..<count
    }

    private func decode(_ message: KafkaMessage) -> FanoutTask? {
        guard let value = message.value else { return nil }
        do {
            return try JSONDecoder().decode(FanoutTask.self, from: Data(value))
        } catch {
            // Tasks are written by the planner only; an unreadable one is a bug or a foreign
            // producer. Skipping it (its offset is committed with the batch) keeps the lane going.
            logger.error("unreadable task skipped: \(error)", metadata: ["source": "\(message.topic)/\(message.partition)/\(message.offset)"])
            return nil
        }
    }

    /// Runs on the lane's thread: blocking Redis calls and producer enqueues, no awaits.
    /// Returns the statuses to store in Redis once the transaction committed.
    private func process(_ tasks: [FanoutTask], producer: KafkaProducer) throws -> [StatusRecord] {
        let layout = configuration.layout
        var statuses: [StatusRecord] = []
        for task in tasks {
            var log = logger
            log[metadataKey: "eventId"] = "\(task.eventId)"
            let progress: TaskProgress
            do {
                progress = try executor.run(task, producer: producer)
            } catch {
                metrics.countError(error)
                throw error
            }
            metrics.tasks.increment()
            try producer.enqueue(KafkaOutgoingMessage(
                topic: configuration.topics.status, key: Array(task.eventId.utf8), value: StatusCoding.encode(progress),
                headers: [KafkaHeader(key: StatusCoding.typeHeader, value: "progress")]
            ))
            let reply = try redis.evalScriptBlocking(
                StatusScripts.recordProgress, keys: [layout.progressKey(eventId: task.eventId)],
                arguments: ProgressSnapshot.arguments(for: progress, ttlSeconds: configuration.statusTTLSeconds)
            )
            let snapshot = try ProgressSnapshot(reply: reply)
            let record = snapshot.statusRecord(
                eventId: task.eventId, taskCount: task.taskCount, publishedAt: task.event.publishedAt, acceptedAt: task.plannedAt
            )
            if snapshot.completedBy == task.taskIndex {
                try producer.enqueue(KafkaOutgoingMessage(
                    topic: configuration.topics.status, key: Array(task.eventId.utf8), value: StatusCoding.encode(record),
                    headers: [KafkaHeader(key: StatusCoding.typeHeader, value: "status")]
                ))
                log.info("event completed", metadata: [
                    "targets": "\(record.targets.total)", "skipped": "\(record.skipped)", "failed": "\(record.failed)",
                    "durationMs": "\(record.timings.durationMs.map(String.init) ?? "-")",
                ])
            }
            if record.state == .processing || snapshot.completedBy == task.taskIndex {
                statuses.append(record)
            }
            log.debug("task done", metadata: [
                "task": "\(task.taskIndex + 1)/\(task.taskCount)", "delivered": "\(progress.delivered.total)", "skipped": "\(progress.skipped)",
            ])
        }
        return statuses
    }

    /// Stores statuses at `herald:status:<id>` (never moving one backwards, see `StatusScripts`).
    private func writeStatuses(_ statuses: [StatusRecord]) throws {
        let commands = statuses.map { record in
            RedisCommand.evalScript(
                StatusScripts.writeStatus, keys: [configuration.layout.statusKey(eventId: record.eventId)],
                arguments: [
                    String(decoding: StatusCoding.encode(record), as: UTF8.self), record.state.rawValue,
                    String(record.tasks.completed), String(configuration.statusTTLSeconds),
                ]
            )
        }
        for reply in try redis.pipelineBlocking(commands) { _ = try reply.get() }
    }

    private func onLaneThreadIgnoringErrors(_ work: @escaping @Sendable () throws -> Void) async {
        do {
            try await onLaneThread(work)
        } catch {
            metrics.countError(error)
            logger.warning("storing status in Redis failed: \(error)")
        }
    }

    private func onLaneThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try work() }) }
        }
    }
}
