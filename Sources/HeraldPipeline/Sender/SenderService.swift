import Foundation
import HeraldKafka
import HeraldPush
import HeraldRedis
import HeraldRegistry
import HeraldStreams
import Logging
import ServiceLifecycle

/// The sender role: `herald.deliveries` in (`read_committed`, its own consumer group), each
/// delivery pushed to its service, one final receipt per delivery out to `herald.receipts`,
/// committed in one transaction with the consumer offsets. See `SenderWork` for one batch.
///
/// `SenderConfiguration.loops` loops run side by side, each a consumer of the group with its
/// own transactional producer, all pushing through the same connections: while one commits
/// and polls, the others' requests are in flight. Their receipts are queued and committed in
/// the `TransactionGate`, so no two of their transactions write a receipts partition at once.
public final class SenderService: Service, Sendable {
    public let configuration: PipelineConfiguration
    private let gateway: PushGateway
    private let registry: RegistrationService?
    private let logger: Logger
    private let loops: [TransactionalLoop]
    private let metrics: PipelineMetrics

    /// - Parameters:
    ///   - gateway: the push services' clients with the deployment's credentials (hubs with
    ///     credentials of their own get clients of their own); shut down when the role ends.
    ///   - registry: removes registrations whose tokens the services call unregistered; nil
    ///     removes none (the receipts still say `unregistered`).
    public init(
        configuration: PipelineConfiguration, gateway: PushGateway, registry: RegistrationService?,
        context: WorkerContext = WorkerContext(), logger: Logger = Logger(label: "herald.sender")
    ) {
        self.configuration = configuration
        self.gateway = gateway
        self.registry = registry
        self.logger = logger
        metrics = context.metrics
        var consumer = configuration.consumerConfiguration(
            group: configuration.sender.group, fetchWaitMaxMs: min(50, configuration.taskFetchWaitMaxMs))
        // Whole batches: the requests of one batch are in flight together, and each batch ends
        // with every answer in before its commit, so small batches leave the connections idle.
        consumer.maxPollRecords = configuration.sender.batchSize
        // A few batches ahead is enough at push speed: librdkafka's default prefetch (100,000
        // records a partition, up to 64 MB) only grows the worker's memory.
        consumer.queuedMinMessages = 2 * configuration.sender.batchSize
        if consumer.extra["queued.max.messages.kbytes"] == nil { consumer.extra["queued.max.messages.kbytes"] = "8192" }
        consumer.fetchMaxBytes = 4 << 20
        consumer.maxPartitionFetchBytes = 512 << 10
        loops = (0..<max(1, configuration.sender.loops)).map { index in
            var producer = configuration.transactionalProducerConfiguration(role: "sender", lane: index, forDeliveries: false)
            producer.transactionTimeoutMs = max(configuration.transactionTimeoutMs, configuration.sender.transactionTimeoutMs)
            producer.lingerMs = 5
            return TransactionalLoop(
                settings: TransactionalLoop.Settings(
                    name: "sender-\(index)",
                    topics: [configuration.topics.deliveries],
                    consumer: consumer,
                    producer: producer,
                    batchSize: configuration.sender.batchSize,
                    lagSampleInterval: configuration.lagSampleInterval,
                    gated: .finishAndCommit,
                    gate: context.transactions,
                    deadLetterTopic: configuration.topics.eventsDeadLetters,
                    progress: context.progress,
                    // Breaking and one-user events' deliveries (the express lanes' partitions) first.
                    firstPartitions: configuration.expressDeliveryPartitions > 0
                        ? TransactionalLoop.FirstPartitions(
                            topic: configuration.topics.deliveries, partitions: 0..<Int32(configuration.expressDeliveryPartitions))
                        : nil
                ),
                logger: logger, metrics: context.metrics
            )
        }
    }

    public func run() async throws {
        let redis = RedisConnection(configuration: configuration.redis, logger: logger)
        defer { redis.close() }
        // A hub's deliveries go with the hub's own credentials where it has them.
        let hubs = HubDirectory(
            topic: configuration.topics.hubs, bootstrapServers: configuration.bootstrapServers, extra: configuration.kafkaExtra,
            logger: logger)
        let follower = Task { await hubs.run() }
        defer { follower.cancel() }
        let gateways = HubPushGateways(deployment: gateway, hubs: hubs, logger: logger)
        let work = SenderWork(
            configuration: configuration, gateways: gateways, registry: registry, redis: redis, logger: logger, metrics: metrics)
        logger.info(
            "sender starting",
            metadata: [
                "group": "\(configuration.sender.group)", "topic": "\(configuration.topics.deliveries)",
                "loops": "\(loops.count)", "batch": "\(configuration.sender.batchSize)",
                "apnsTeams": "\(gateway.apns.map(\.credentials.teamId).joined(separator: ","))",
                "fcmProjects": "\(gateway.fcm.map(\.account.projectId).joined(separator: ","))",
                "receipts": "\(configuration.topics.receipts)",
            ])
        do {
            try await withGracefulShutdownHandler {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for loop in loops {
                        group.addTask { try await loop.run { batch, producer in try await work.handle(batch, producer: producer) } }
                    }
                    // One loop that cannot go on ends the role (and the others with it).
                    for try await _ in group {}
                }
            } onGracefulShutdown: {
                self.stop()
            }
        } catch {
            await gateways.shutdown()
            throw error
        }
        await gateways.shutdown()
    }

    /// Asks the role to finish the batches in hand, commit them and stop.
    public func stop() {
        for loop in loops { loop.stop() }
    }
}
