import Foundation
import HeraldRegistry
import Logging
import Metrics
import ServiceLifecycle

/// Runs beside the indexer role and brings Redis back when it lost its data: once a second it
/// reads the index's epoch (`IndexEpoch`), and when there is none (a new deployment, a
/// `FLUSHALL`, a Redis that restarted empty) it runs the `IndexRebuild`. Meanwhile the
/// planner and the fan-out wait, so nothing is planned or delivered from a partial index, and
/// resume by themselves when the epoch is back. With several indexers, one rebuilds (the
/// lease) and the others keep watching.
public final class IndexKeeper: Service, Sendable {
    private let rebuild: IndexRebuild
    private let interval: Duration
    private let token: String
    private let logger: Logger
    private let rebuilds = Counter(label: "herald_index_rebuilds_total")

    public init(
        rebuild: IndexRebuild, instanceId: String, interval: Duration = .seconds(1),
        logger: Logger = Logger(label: "herald.registry.keeper")
    ) {
        self.rebuild = rebuild
        self.interval = interval
        self.token = "\(instanceId)-\(UUID().uuidString.prefix(8).lowercased())"
        self.logger = logger
    }

    public func run() async throws {
        let index = rebuild.reindexer.index
        var reported = false
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                if try await index.epoch() == nil {
                    if !reported {
                        logger.warning(
                            "the registration index has no epoch (a new deployment, or Redis lost its data): rebuilding it from the log; planning and fan-out wait until it is whole"
                        )
                        reported = true
                    }
                    if let summary = try await rebuild.run(token: token, logger: logger) {
                        rebuilds.increment()
                        reported = false
                        logger.notice(
                            "registration index rebuilt from the log",
                            metadata: [
                                "registrations": "\(summary.registrations.applied)", "records": "\(summary.registrations.recordsRead)",
                                "statuses": "\(summary.statuses.statuses)", "claims": "\(summary.statuses.claims)",
                                "inFlight": "\(summary.statuses.inFlight)", "completedByRebuild": "\(summary.statuses.completed)",
                                "seconds": "\(String(format: "%.2f", summary.registrations.seconds + summary.statuses.seconds))",
                                "epoch": "\(summary.epoch)",
                            ])
                    }
                }
            } catch {
                logger.warning("checking or rebuilding the registration index failed; trying again", metadata: ["error": "\(error)"])
            }
            try? await Task.sleep(for: interval)
        }
    }
}
