import Foundation
import HeraldKafka
import HeraldPipeline
import HeraldRedis
import HeraldRegistry
import Logging
import Prometheus
import ServiceLifecycle

/// Composes a `herald worker` process: the requested roles (planner, fan-out, scheduler,
/// sender from HeraldPipeline; indexer from HeraldRegistry) and the metrics/health endpoint,
/// in one ServiceGroup that shuts down gracefully on SIGTERM/SIGINT.
public struct WorkerRunner: Sendable {
    public let settings: HeraldSettings
    public let roles: Set<WorkerRole>
    public let registry: PrometheusCollectorRegistry

    public init(settings: HeraldSettings, registry: PrometheusCollectorRegistry) throws {
        self.settings = settings
        self.registry = registry
        var roles: Set<WorkerRole> = []
        for name in settings.list(.roles) {
            guard let role = WorkerRole(rawValue: name.lowercased()) else {
                throw SettingError(key: .roles, value: settings[.roles], expected: "roles from planner, fanout, indexer, scheduler, sender")
            }
            roles.insert(role)
        }
        guard !roles.isEmpty else {
            throw SettingError(key: .roles, value: settings[.roles], expected: "at least one role")
        }
        self.roles = roles
    }

    /// - Parameter extraServices: run in the same ServiceGroup (the demo adds the API and its story).
    public func run(extraServices: [any Service] = [], pool sharedPool: RedisConnectionPool? = nil) async throws {
        let logger = Logger(label: "herald.worker")
        let allocator = try settings.applyAllocator(environment: ProcessInfo.processInfo.environment)
        let pipeline = try settings.pipelineConfiguration()
        // What this process's roles share: gates, the progress board the health endpoint reads.
        let context = WorkerContext()
        let registryConfiguration = try settings.registryConfiguration()
        let pool = try sharedPool ?? RedisConnectionPool(configuration: pipeline.redis, size: settings.redisPoolSize())
        defer { if sharedPool == nil { pool.shutdown() } }
        let admin = try KafkaAdmin(configuration: settings.adminConfiguration())
        try await pool.verify()

        var parts = Parts(services: extraServices)
        let shared = Shared(pipeline: pipeline, registry: registryConfiguration, pool: pool, admin: admin, logger: logger)
        if roles.contains(.indexer) { try await addIndexer(to: &parts, shared) }
        if roles.contains(.sender) { try await addSender(to: &parts, shared, context: context) }
        let metricsPort = try settings.metricsPort()
        if metricsPort > 0 {
            let readiness = Readiness(admin: admin, redis: pool, layout: pipeline.layout)
            parts.services.append(
                HealthEndpoint.application(
                    host: settings[.apiHost], port: metricsPort, registry: registry,
                    isReady: { await readiness.check() }, stallLimits: try settings.stallLimits(), progress: context.progress,
                    logger: logger
                ))
        }
        MetricFamilies.declare(context.metrics)
        // Every worker with transactional producers fences those of workers that died.
        parts.services.append(AbandonedTransactions(configuration: pipeline, roles: roles, pool: pool, logger: logger))
        logger.info(
            "worker starting",
            metadata: [
                "roles": "\(roles.map(\.rawValue).sorted().joined(separator: ","))",
                "instance": "\(pipeline.instanceId)", "brokers": "\(pipeline.bootstrapServers)",
                "redis": "\(pipeline.redis.endpoint)", "slots": "\(pipeline.layout.slotCount)",
                "allocator": "\(allocator)",
            ])
        do {
            try await runWorker(
                roles: roles, configuration: pipeline,
                provisionTopics: true, extraServices: parts.services, context: context, logger: logger
            )
        } catch {
            await parts.shutdown()
            throw error
        }
        await parts.shutdown()
    }

    /// The services a worker runs beside its pipeline roles, and the clients they leave to
    /// shut down once the pipeline has stopped.
    private struct Parts {
        var services: [any Service]
        var registryProducer: KafkaProducer?
        var registryDeadLetters: RegistryDeadLetters?

        func shutdown() async {
            await registryProducer?.shutdown(flushTimeout: .seconds(5))
            await registryDeadLetters?.shutdown()
        }
    }

    /// What the roles' services are built from.
    private struct Shared {
        var pipeline: PipelineConfiguration
        var registry: RegistryConfiguration
        var pool: RedisConnectionPool
        var admin: KafkaAdmin
        var logger: Logger
    }

    /// The indexer: the registration log into Redis, and Redis rebuilt from the log whenever
    /// the index is found missing.
    private func addIndexer(to parts: inout Parts, _ shared: Shared) async throws {
        let (pipeline, registryConfiguration, pool, admin, logger) = (
            shared.pipeline, shared.registry, shared.pool, shared.admin, shared.logger
        )
        let index = RegistrationIndex(pool: pool, layout: try settings.layout())
        try await RegistrationLog.createTopic(admin: admin, configuration: registryConfiguration)
        let deadLetters = RegistryDeadLetters(
            configuration: try settings.reliableProducerConfiguration(clientId: "herald-indexer-dead-letters"),
            topic: pipeline.topics.eventsDeadLetters, logger: logger)
        parts.registryDeadLetters = deadLetters
        parts.services.append(
            RegistrationIndexer(
                configuration: registryConfiguration,
                consumerConfiguration: try settings.consumerConfiguration(groupId: nil, clientId: "herald-indexer"),
                index: index, deadLetters: { try await deadLetters.write($0) }
            ))
        let rebuild = IndexRebuild(
            reindexer: Reindexer(
                configuration: registryConfiguration,
                consumerConfiguration: try settings.consumerConfiguration(groupId: nil, clientId: "herald-rebuild"),
                index: index, concurrency: max(1, pool.size)
            ),
            statuses: StatusRebuilder(
                configuration: pipeline, pool: pool,
                producer: try KafkaProducer(configuration: settings.reliableProducerConfiguration(clientId: "herald-rebuild"))
            )
        )
        parts.services.append(IndexKeeper(rebuild: rebuild, instanceId: pipeline.instanceId))
    }

    /// The sender, with the registry it removes unregistered devices through. Credentials come
    /// first: a missing or malformed one stops the worker here, naming it.
    private func addSender(to parts: inout Parts, _ shared: Shared, context: WorkerContext) async throws {
        let (pipeline, registryConfiguration, pool, admin, logger) = (
            shared.pipeline, shared.registry, shared.pool, shared.admin, shared.logger
        )
        let gateway = try await settings.pushGateway()
        let producer = try KafkaProducer(
            configuration: settings.reliableProducerConfiguration(clientId: "herald-sender-registry"), logger: logger)
        parts.registryProducer = producer
        let registry = RegistrationService(
            configuration: registryConfiguration,
            log: RegistrationLog(producer: producer, topic: registryConfiguration.registrationsTopic),
            index: RegistrationIndex(pool: pool, layout: try settings.layout()), admin: admin, logger: logger)
        parts.services.append(
            SenderService(configuration: pipeline, gateway: gateway, registry: registry, context: context, logger: logger))
    }
}
