import Dispatch
import HeraldDomain
import Foundation
import Logging
import ServiceLifecycle
import HeraldStreams

/// Runs the given pipeline roles until SIGTERM or SIGINT, then shuts them down gracefully
/// (each finishes or aborts its open transaction, commits, and leaves its consumer group).
/// A shutdown that passes `configuration.drainTimeout` is escalated to cancellation, and the
/// process exits 10 s later if something is still stuck.
///
/// The one-call entry for `herald worker` and for tests that start a worker process. Topics
/// are created first when `provisionTopics` is set. `extraServices` run in the same group
/// (for example the indexer, a metrics endpoint); the indexer and sender roles in `roles` are
/// theirs to start.
public func runWorker(
    roles: Set<WorkerRole>,
    configuration: PipelineConfiguration,
    provisionTopics: Bool = true,
    extraServices: [any Service] = [],
    context: WorkerContext = WorkerContext(),
    logger: Logger = Logger(label: "herald.worker")
) async throws {
    if provisionTopics {
        try await TopicProvisioner(
            topics: configuration.topics, bootstrapServers: configuration.bootstrapServers,
            extra: configuration.kafkaExtra, logger: logger
        ).provision()
    }
    var services: [any Service] = extraServices
    // One context per worker: its bulk lanes step aside for its express lanes and for the
    // narrow events its planner delivers; its transactions share one gate.
    if roles.contains(.planner) { services.append(PlannerService(configuration: configuration, context: context, logger: logger)) }
    if roles.contains(.fanout) { services.append(FanoutService(configuration: configuration, context: context, logger: logger)) }
    if roles.contains(.scheduler) { services.append(SchedulerService(configuration: configuration, context: context, logger: logger)) }
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

/// The roles a `herald worker` process can run (`--roles`). `runWorker` starts the planner,
/// the fan-out and the scheduler; the app composes the indexer (in HeraldRegistry) and the
/// sender (with its push credentials) next to them.
public enum WorkerRole: String, Sendable, Hashable, CaseIterable {
    case planner
    case fanout
    /// Applies `herald.registrations` to the Redis index, and rebuilds it when it is missing.
    case indexer
    /// Releases schedules from `herald.scheduled` at their time.
    case scheduler
    /// Pushes `herald.deliveries` to APNs, FCM, Web Push and WNS and writes the receipts.
    case sender
}

/// Ends the process when a graceful shutdown overruns: SIGTERM must always end a worker, even
/// when a thread is stuck inside a call that ignores cancellation (librdkafka's, Redis's).
///
/// The service group escalates a shutdown that passes `drain` to cancellation; this waits
/// `grace` more, then logs one line and exits with status 2. The timer runs on a Dispatch
/// queue, so a starved cooperative pool cannot delay it. It exits without the process's exit
/// handlers (`_exit`), as `herald worker` does after an orderly shutdown (`ProcessEnd`): a
/// worker that could not drain still has librdkafka threads inside calls a frozen broker holds.
struct ShutdownDeadline: Service {
    let drain: Duration
    let grace: Duration
    let logger: Logger

    func run() async throws {
        do {
            try await gracefulShutdown()
        } catch {
            return  // cancelled without a graceful shutdown: whoever cancelled is in charge
        }
        let limit = drain + grace
        let logger = logger
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(limit.wholeNanoseconds))) {
            logger.critical(
                "shutdown did not finish within HERALD_DRAIN_SECONDS plus the grace; exiting now",
                metadata: ["limit": "\(limit)", "grace": "\(grace)"])
            fflush(nil)
            _exit(2)
        }
    }
}
