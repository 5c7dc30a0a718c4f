import Foundation
import HeraldPipeline
import Logging

/// What the benchmark needs from the application around it: how settings become a pipeline
/// configuration for a phase's names, and how to start a worker process for a phase. The
/// CLI provides both from its settings, so the benchmark, the workers it spawns, and a
/// production deployment all read configuration the same way.
public struct BenchmarkEnvironment: Sendable {
    public var configuration: @Sendable (BenchmarkNames) throws -> PipelineConfiguration
    public var workerLaunch: @Sendable (WorkerSpec) -> WorkerLaunch
    /// Where `<timestamp>.json` is written (`bench/results`).
    public var resultsDirectory: URL
    /// Where worker logs go (kept when a run fails).
    public var workDirectory: URL
    public var logger: Logger
    /// Starts a private Redis Cluster of this many masters (and as many replicas) for the
    /// cluster row (`BenchmarkOptions.redisClusterMasters`); nil: the row is not measured.
    public var startRedisCluster: (@Sendable (_ masters: Int) throws -> BenchmarkRedisCluster)?
    /// Herald's documented defaults the idle row runs with in place of the run's own settings
    /// (`IdlePhase`); nil: the row is not measured.
    public var productionDefaults: BenchmarkProductionDefaults?

    public init(
        configuration: @escaping @Sendable (BenchmarkNames) throws -> PipelineConfiguration,
        workerLaunch: @escaping @Sendable (WorkerSpec) -> WorkerLaunch,
        resultsDirectory: URL, workDirectory: URL, logger: Logger,
        startRedisCluster: (@Sendable (_ masters: Int) throws -> BenchmarkRedisCluster)? = nil,
        productionDefaults: BenchmarkProductionDefaults? = nil
    ) {
        self.configuration = configuration
        self.workerLaunch = workerLaunch
        self.resultsDirectory = resultsDirectory
        self.workDirectory = workDirectory
        self.logger = logger
        self.startRedisCluster = startRedisCluster
        self.productionDefaults = productionDefaults
    }
}

/// The settings of a production Herald that the run's own may differ from: the embedded stack
/// shortens the fetch waits for its broker, and the bench's workers run only the roles a phase
/// needs. The CLI reads them from the settings' declarations, so the idle row measures what a
/// deployment that sets nothing runs.
public struct BenchmarkProductionDefaults: Sendable, Hashable {
    /// `herald worker`'s roles when none are given (`HERALD_ROLES`).
    public var roles: String
    /// `HERALD_PLANNER_FETCH_WAIT_MS`: the planner's longest idle fetch of the events topic.
    public var plannerFetchWaitMs: Int
    /// `HERALD_TASK_FETCH_WAIT_MS`: the task lanes' (and the scheduler's) longest idle fetch.
    public var taskFetchWaitMs: Int

    public init(roles: String, plannerFetchWaitMs: Int, taskFetchWaitMs: Int) {
        self.roles = roles
        self.plannerFetchWaitMs = plannerFetchWaitMs
        self.taskFetchWaitMs = taskFetchWaitMs
    }
}

/// A Redis Cluster started for one phase of a run.
public struct BenchmarkRedisCluster: Sendable {
    /// `redis+cluster://` with the masters as seeds.
    public var url: String
    /// Process ids of every node (masters and replicas), whose CPU the phase counts as Redis's.
    public var pids: [Int32]
    /// Stops the nodes and removes their data.
    public var stop: @Sendable () -> Void

    public init(url: String, pids: [Int32], stop: @escaping @Sendable () -> Void) {
        self.url = url
        self.pids = pids
        self.stop = stop
    }
}
