import Foundation
import HeraldKafka
import HeraldPush
import HeraldRedis
import HeraldRegistry
import Logging
import ServiceLifecycle

/// The sender role: `herald.deliveries` in (`read_committed`, its own consumer group), each
/// delivery pushed to its service, one final receipt per delivery out to `herald.receipts`,
/// committed in one transaction with the consumer offsets. See `SenderWork` for one batch.
///
/// The transaction's records are only receipts, on partitions no other role writes: only the
/// flush and the commit pass through the `TransactionGate`.
public final class SenderService: Service, Sendable {
    public let configuration: PipelineConfiguration
    private let gateway: PushGateway
    private let registry: RegistrationService?
    private let logger: Logger
    private let loop: TransactionalLoop

    /// - Parameters:
    ///   - gateway: the push services' clients; shut down when the role ends.
    ///   - registry: removes registrations whose tokens the services call unregistered; nil
    ///     removes none (the receipts still say `unregistered`).
    public init(
        configuration: PipelineConfiguration, gateway: PushGateway, registry: RegistrationService?,
        logger: Logger = Logger(label: "herald.sender")
    ) {
        self.configuration = configuration
        self.gateway = gateway
        self.registry = registry
        self.logger = logger
        var producer = configuration.transactionalProducerConfiguration(role: "sender", lane: nil, forDeliveries: false)
        producer.transactionTimeoutMs = max(configuration.transactionTimeoutMs, configuration.sender.transactionTimeoutMs)
        producer.lingerMs = 5
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
        loop = TransactionalLoop(
            settings: TransactionalLoop.Settings(
                name: "sender",
                topics: [configuration.topics.deliveries],
                consumer: consumer,
                producer: producer,
                batchSize: configuration.sender.batchSize,
                lagSampleInterval: configuration.lagSampleInterval,
                gated: .finishAndCommit,
                deadLetterTopic: configuration.topics.eventsDeadLetters
            ),
            logger: logger
        )
    }

    public func run() async throws {
        let redis = RedisConnection(configuration: configuration.redis, logger: logger)
        defer { redis.close() }
        let work = SenderWork(configuration: configuration, gateway: gateway, registry: registry, redis: redis, logger: logger)
        logger.info(
            "sender starting",
            metadata: [
                "group": "\(configuration.sender.group)", "topic": "\(configuration.topics.deliveries)",
                "apnsTeams": "\(gateway.apns.map(\.credentials.teamId).joined(separator: ","))",
                "fcmProjects": "\(gateway.fcm.map(\.account.projectId).joined(separator: ","))",
                "receipts": "\(configuration.topics.receipts)",
            ])
        do {
            try await withGracefulShutdownHandler {
                try await loop.run { batch, producer in try await work.handle(batch, producer: producer) }
            } onGracefulShutdown: {
                self.loop.stop()
            }
        } catch {
            await gateway.shutdown()
            throw error
        }
        await gateway.shutdown()
    }

    /// Asks the role to finish the batch in hand, commit it and stop.
    public func stop() { loop.stop() }
}
