import Foundation
import HeraldKafka
import HeraldRedis
import HeraldStreams
import Logging
import ServiceLifecycle

/// The planner role: `herald.events` in, tasks, statuses and dead letters out, one
/// transaction per batch of events; with `plannerDeliversNarrowEvents`, also the deliveries of
/// narrow events. Each transaction passes whole through the `TransactionGate` (it writes the
/// status topic, as the fan-out lanes do). On graceful shutdown it finishes the batch in hand,
/// commits it and leaves the consumer group.
public final class PlannerService: Service, Sendable {
    public let configuration: PipelineConfiguration
    private let logger: Logger
    private let loop: TransactionalLoop

    /// The worker's: the narrow events this planner delivers make its fan-out's bulk lanes
    /// step aside, it tells them of the task partitions it wrote, and its transactions pass the
    /// worker's gate.
    private let context: WorkerContext

    public init(
        configuration: PipelineConfiguration, context: WorkerContext = WorkerContext(), logger: Logger = Logger(label: "herald.planner")
    ) {
        self.context = context
        self.configuration = configuration
        self.logger = logger
        loop = TransactionalLoop(
            settings: TransactionalLoop.Settings(
                name: "planner",
                topics: [configuration.topics.events],
                consumer: configuration.consumerConfiguration(
                    group: configuration.plannerGroup, fetchWaitMaxMs: configuration.plannerFetchWaitMaxMs),
                producer: configuration.transactionalProducerConfiguration(role: "planner", lane: nil, forDeliveries: false),
                batchSize: configuration.plannerBatchSize,
                lagSampleInterval: configuration.lagSampleInterval,
                gate: context.transactions,
                deadLetterTopic: configuration.topics.eventsDeadLetters,
                progress: context.progress
            ),
            logger: logger, metrics: context.metrics
        )
    }

    public func run() async throws {
        let (tasks, express, deliveries) = await taskPartitionCounts()
        let redis = RedisConnection(configuration: configuration.redis, logger: logger)
        defer { redis.close() }
        let hubs = HubDirectory(
            topic: configuration.topics.hubs, bootstrapServers: configuration.bootstrapServers, extra: configuration.kafkaExtra,
            logger: logger)
        let follower = Task { await hubs.run() }
        defer { follower.cancel() }
        let planner = EventPlanner(
            configuration: configuration, redis: redis, taskPartitions: tasks, expressPartitions: express, logger: logger,
            metrics: context.metrics, hubs: hubs, deliveryPartitions: deliveries
        )
        // Narrow events are delivered here, in the planner's transaction, when so configured.
        let delivery =
            configuration.plannerDeliversNarrowEvents
            ? TaskDelivery(
                lane: .express, name: "planner-express", configuration: configuration,
                templates: TemplateCache(layout: configuration.layout), gate: context.express, logger: logger,
                metrics: context.metrics
            )
            : nil
        defer { delivery?.close() }
        await delivery?.prepare()
        let notices: TaskNotices? = configuration.directTaskReads ? context.notices : nil
        logger.info(
            "planner starting",
            metadata: [
                "group": "\(configuration.plannerGroup)", "topic": "\(configuration.topics.events)",
                "deliversNarrowEvents": "\(delivery != nil)",
            ])
        try await withGracefulShutdownHandler {
            try await loop.run { batch, producer in
                let planned = try await planner.handle(batch, producer: producer)
                // The statuses are stored while the narrow events are delivered (two Redis
                // connections); both end before the transaction commits.
                async let stored: Void = planner.store(planned.statuses)
                var work =
                    if let delivery, !planned.narrow.isEmpty {
                        try await delivery.deliver(planned.narrow, producer: producer)
                    } else {
                        TransactionalLoop.BatchWork()
                    }
                try await stored
                if let notices, !planned.taskPartitions.isEmpty {
                    // Idle lanes of this process read these partitions at once (`DirectReads`).
                    let delivered = work.afterCommit
                    let partitions = planned.taskPartitions
                    work.afterCommit = {
                        notices.post(partitions)
                        await delivered?()
                    }
                }
                return work
            }
        } onGracefulShutdown: {
            self.loop.stop()
        }
    }

    /// Asks the loop to stop after the current batch (what graceful shutdown does).
    public func stop() { loop.stop() }

    /// Partition counts of the task topics as the cluster has them, so the planner never
    /// addresses a partition that does not exist; the configured counts when unknown.
    /// Partition counts of `herald.tasks`, `herald.tasks.express` and `herald.deliveries`.
    private func taskPartitionCounts() async -> (Int32, Int32, Int32) {
        let topics = configuration.topics
        var adminConfiguration = KafkaAdminConfiguration(bootstrapServers: configuration.bootstrapServers)
        adminConfiguration.extra = configuration.kafkaExtra
        guard let admin = try? KafkaAdmin(configuration: adminConfiguration, logger: logger),
            let existing = try? await admin.listTopics()
        else { return (topics.tasksPartitions, topics.expressTasksPartitions, topics.deliveriesPartitions) }
        return (
            existing[topics.tasks].map { Int32($0) } ?? topics.tasksPartitions,
            existing[topics.expressTasks].map { Int32($0) } ?? topics.expressTasksPartitions,
            existing[topics.deliveries].map { Int32($0) } ?? topics.deliveriesPartitions
        )
    }
}
