import Foundation
import HeraldDomain
import HeraldKafka
import HeraldRedis
import Logging
import ServiceLifecycle

/// The planner role: `herald.events` in, tasks, statuses and dead letters out, one
/// transaction per batch of events; with `plannerDeliversNarrowEvents`, also the deliveries of
/// narrow events and of small wide ones (`EventPlanner.deliversItself`). Each transaction
/// passes whole through the `TransactionGate` (it writes the status topic, as the fan-out
/// lanes do). On graceful shutdown it finishes the batch in hand, commits it and leaves the
/// consumer group.
public final class PlannerService: Service, Sendable {
    public let configuration: PipelineConfiguration
    private let logger: Logger
    private let loop: TransactionalLoop

    public init(configuration: PipelineConfiguration, logger: Logger = Logger(label: "herald.planner")) {
        self.configuration = configuration
        self.logger = logger
        loop = TransactionalLoop(
            settings: TransactionalLoop.Settings(
                name: "planner",
                topics: [configuration.topics.events],
                consumer: configuration.consumerConfiguration(
                    group: configuration.plannerGroup, fetchWaitMaxMs: configuration.plannerFetchWaitMaxMs),
                producer: configuration.plannerProducerConfiguration(),
                batchSize: configuration.plannerBatchSize,
                lagSampleInterval: configuration.lagSampleInterval,
                deadLetterTopic: configuration.topics.eventsDeadLetters
            ),
            logger: logger
        )
    }

    public func run() async throws {
        let (tasks, express) = await taskPartitionCounts()
        let redis = RedisConnection(configuration: configuration.redis, logger: logger)
        defer { redis.close() }
        let planner = EventPlanner(
            configuration: configuration, redis: redis, taskPartitions: tasks, expressPartitions: express, logger: logger
        )
        // Narrow events, and small wide ones, are delivered here, in the planner's
        // transaction, when so configured: on one thread per bulk lane.
        let deliveries =
            configuration.plannerDeliversNarrowEvents
            ? (0..<configuration.plannerDeliveryThreads).map { index in
                TaskDelivery(
                    lane: .express, name: "planner-express-\(index)", configuration: configuration,
                    templates: TemplateCache(layout: configuration.layout), logger: logger
                )
            }
            : []
        defer { for delivery in deliveries { delivery.close() } }
        for delivery in deliveries { await delivery.prepare() }
        logger.info(
            "planner starting",
            metadata: [
                "group": "\(configuration.plannerGroup)", "topic": "\(configuration.topics.events)",
                "deliversNarrowEvents": "\(!deliveries.isEmpty)", "deliveryThreads": "\(deliveries.count)",
            ])
        try await withGracefulShutdownHandler {
            try await loop.run { batch, producer in
                let planned = try await planner.handle(batch, producer: producer)
                // The statuses are stored while the tasks are delivered (other Redis
                // connections); both end before the transaction commits.
                async let stored: Void = planner.store(planned.statuses)
                let work = try await Self.deliver(planned.inline, on: deliveries, producer: producer)
                try await stored
                return work
            }
        } onGracefulShutdown: {
            self.loop.stop()
        }
    }

    /// Delivers `tasks` side by side on `deliveries`, task *i* on delivery *i* modulo their
    /// count, inside `producer`'s open transaction. Side by side, each delivery writes its own
    /// express partition of the deliveries topic (as far as there are enough): two that picked
    /// the same one would share its serial batch cycle, which halved their rate.
    static func deliver(_ tasks: [FanoutTask], on deliveries: [TaskDelivery], producer: KafkaProducer) async throws
        -> TransactionalLoop.BatchWork
    {
        guard !tasks.isEmpty, !deliveries.isEmpty else { return TransactionalLoop.BatchWork() }
        var shares = [[FanoutTask]](repeating: [], count: min(deliveries.count, tasks.count))
        for (index, task) in tasks.enumerated() { shares[index % shares.count].append(task) }
        if shares.count == 1 { return try await deliveries[0].deliver(shares[0], producer: producer) }
        let first = Int32.random(in: 0..<4_096)
        let works = try await withThrowingTaskGroup(of: TransactionalLoop.BatchWork.self) { group in
            for (index, (delivery, share)) in zip(deliveries, shares).enumerated() {
                group.addTask { try await delivery.deliver(share, source: first + Int32(index), producer: producer) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        var combined = TransactionalLoop.BatchWork()
        let finishes = works.compactMap(\.finish)
        if !finishes.isEmpty {
            combined.finish = { producer in
                for finish in finishes { try await finish(producer) }
            }
        }
        let afterCommits = works.compactMap(\.afterCommit)
        if !afterCommits.isEmpty {
            combined.afterCommit = {
                for afterCommit in afterCommits { await afterCommit() }
            }
        }
        return combined
    }

    /// Asks the loop to stop after the current batch (what graceful shutdown does).
    public func stop() { loop.stop() }

    /// Partition counts of the task topics as the cluster has them, so the planner never
    /// addresses a partition that does not exist; the configured counts when unknown.
    private func taskPartitionCounts() async -> (Int32, Int32) {
        let topics = configuration.topics
        var adminConfiguration = KafkaAdminConfiguration(bootstrapServers: configuration.bootstrapServers)
        adminConfiguration.extra = configuration.kafkaExtra
        guard let admin = try? KafkaAdmin(configuration: adminConfiguration, logger: logger),
            let existing = try? await admin.listTopics()
        else { return (topics.tasksPartitions, topics.expressTasksPartitions) }
        return (
            existing[topics.tasks].map { Int32($0) } ?? topics.tasksPartitions,
            existing[topics.expressTasks].map { Int32($0) } ?? topics.expressTasksPartitions
        )
    }
}
