import Logging
import ServiceLifecycle

/// Runs the given pipeline roles until SIGTERM or SIGINT, then shuts them down gracefully
/// (each finishes or aborts its open transaction, commits, and leaves its consumer group).
/// A shutdown that passes `configuration.drainTimeout` is escalated to cancellation, and the
/// process exits 10 s later if something is still stuck.
///
/// The one-call entry for `herald worker` and for tests that start a worker process. Topics
/// are created first when `provisionTopics` is set. `extraServices` run in the same group
/// (for example the indexer, a metrics endpoint).
public func runWorker(
    roles: Set<WorkerRole>,
    configuration: PipelineConfiguration,
    provisionTopics: Bool = true,
    extraServices: [any Service] = [],
    logger: Logger = Logger(label: "herald.worker")
) async throws {
    if provisionTopics {
        try await TopicProvisioner(
            topics: configuration.topics, bootstrapServers: configuration.bootstrapServers,
            extra: configuration.kafkaExtra, logger: logger
        ).provision()
    }
    var services: [any Service] = extraServices
    if roles.contains(.planner) { services.append(PlannerService(configuration: configuration, logger: logger)) }
    if roles.contains(.fanout) { services.append(FanoutService(configuration: configuration, logger: logger)) }
    var groupConfiguration = ServiceGroupConfiguration(
        services: services.map { ServiceGroupConfiguration.ServiceConfiguration(service: $0) }
            + [
                .init(
                    service: ShutdownDeadline(drain: configuration.drainTimeout, grace: .seconds(10), logger: logger),
                    successTerminationBehavior: .ignore)
            ],
        gracefulShutdownSignals: [.sigterm, .sigint],
        logger: logger
    )
    groupConfiguration.maximumGracefulShutdownDuration = configuration.drainTimeout
    try await ServiceGroup(configuration: groupConfiguration).run()
}
