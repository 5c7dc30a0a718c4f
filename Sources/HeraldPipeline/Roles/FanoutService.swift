import Foundation
import HeraldRegistry
import Logging
import ServiceLifecycle

/// The fan-out role: `configuration.bulkLanes` lanes on `herald.tasks` and
/// `configuration.expressLanes` on `herald.tasks.express`, sharing one template cache. On
/// graceful shutdown each lane finishes the task in hand, commits and leaves its group.
public final class FanoutService: Service, Sendable {
    public let configuration: PipelineConfiguration
    private let logger: Logger
    private let lanes: [FanoutLane]

    /// - Parameter context: the worker's; its bulk lanes step aside while its express lanes (and
    ///   its planner's narrow deliveries) work, and read the task partitions its planner notices.
    public init(
        configuration: PipelineConfiguration, context: WorkerContext = WorkerContext(), logger: Logger = Logger(label: "herald.fanout")
    ) {
        self.configuration = configuration
        self.logger = logger
        let templates = TemplateCache(layout: configuration.layout)
        var lanes: [FanoutLane] = []
        for index in 0..<max(0, configuration.expressLanes) {
            lanes.append(
                FanoutLane(
                    kind: .express, index: index, configuration: configuration, templates: templates, context: context, logger: logger))
        }
        for index in 0..<max(0, configuration.bulkLanes) {
            lanes.append(
                FanoutLane(kind: .bulk, index: index, configuration: configuration, templates: templates, context: context, logger: logger))
        }
        self.lanes = lanes
    }

    public func run() async throws {
        logger.info(
            "fan-out starting",
            metadata: [
                "bulkLanes": "\(configuration.bulkLanes)", "expressLanes": "\(configuration.expressLanes)",
                "instance": "\(configuration.instanceId)",
            ])
        try await withGracefulShutdownHandler {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for lane in lanes {
                    group.addTask { try await lane.run() }
                }
                try await group.waitForAll()
            }
        } onGracefulShutdown: {
            self.stop()
        }
    }

    /// Asks every lane to stop after its current task (what graceful shutdown does).
    public func stop() {
        for lane in lanes { lane.stop() }
    }
}
