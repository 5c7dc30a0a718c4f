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

    public init(
        configuration: @escaping @Sendable (BenchmarkNames) throws -> PipelineConfiguration,
        workerLaunch: @escaping @Sendable (WorkerSpec) -> WorkerLaunch,
        resultsDirectory: URL, workDirectory: URL, logger: Logger
    ) {
        self.configuration = configuration
        self.workerLaunch = workerLaunch
        self.resultsDirectory = resultsDirectory
        self.workDirectory = workDirectory
        self.logger = logger
    }
}
