import Foundation
import HeraldDomain
import HeraldKafka
import Logging
import Synchronization

/// One consumer of a task topic with its own transactional producer, Redis connection and
/// thread. A fan-out worker runs several: bulk lanes on `herald.tasks` and express lanes on
/// `herald.tasks.express`, so narrow events are served while a broadcast is in progress.
///
/// Everything a batch of tasks emits — deliveries, each task's `TaskProgress`, the final
/// `completed` status — and the batch's task offsets go in one transaction.
final class FanoutLane: Sendable {
    let lane: TaskLane
    let index: Int
    private let loop: TransactionalLoop
    private let delivery: TaskDelivery
    private let configuration: PipelineConfiguration
    private let logger: Logger

    init(
        kind: TaskLane, index: Int, configuration: PipelineConfiguration, templates: TemplateCache, context: WorkerContext,
        logger: Logger
    ) {
        let metrics = context.metrics
        self.lane = kind
        self.index = index
        self.logger = logger
        self.configuration = configuration
        let name = "fanout-\(kind.rawValue)-\(index)"
        delivery = TaskDelivery(
            lane: kind, name: name, configuration: configuration, templates: templates, gate: context.express, logger: logger,
            metrics: metrics)
        var producer = configuration.transactionalProducerConfiguration(
            role: "fanout-\(kind.rawValue)", lane: index, forDeliveries: kind == .bulk)
        if kind == .express { producer.lingerMs = 0 }
        let direct = kind == .bulk && configuration.directTaskReads
        let settings = TransactionalLoop.Settings(
            name: name,
            topics: [kind == .bulk ? configuration.topics.tasks : configuration.topics.expressTasks],
            consumer: configuration.consumerConfiguration(
                group: kind == .bulk ? configuration.fanoutGroup : configuration.expressGroup,
                fetchWaitMaxMs: kind == .bulk || configuration.plannerDeliversNarrowEvents ? configuration.taskFetchWaitMaxMs : 10
            ),
            producer: producer,
            batchSize: kind == .bulk ? 1 : configuration.expressBatchSize,
            lagSampleInterval: configuration.lagSampleInterval,
            gated: kind == .bulk ? .finishAndCommit : .wholeTransaction,
            gate: context.transactions,
            deadLetterTopic: configuration.topics.eventsDeadLetters,
            progress: context.progress,
            directReads: direct
                ? DirectReads.Settings(notices: context.notices, consumer: configuration.directReadConfiguration(lane: name)) : nil
        )
        loop = TransactionalLoop(
            settings: settings,
            logger: logger, metrics: metrics
        )
    }

    func stop() { loop.stop() }

    func run() async throws {
        defer { delivery.close() }
        await delivery.prepare()
        // The bulk producer's linger depends on how the lane partitions its deliveries.
        var producer = loop.settings.producer
        if lane == .bulk {
            producer.lingerMs = configuration.deliveryLingerMs(onePartitionPerTask: delivery.writesOnePartitionPerTask)
        }
        try await loop.run(producer: producer) { [self] batch, producer in
            // A bulk batch is one task; its partition of `herald.tasks` picks the deliveries
            // partition, which no other lane then writes.
            try await delivery.deliver(
                try PermanentRecordFailure.mapAll(batch, decode), source: lane == .bulk ? batch.first?.partition : nil, producer: producer
            )
        }
    }

    /// Tasks are written by the planner only; an unreadable one is a bug or a foreign producer.
    /// It is dead-lettered (the loop writes it to the dead-letter topic with this reason and
    /// delivers the rest of the batch).
    private func decode(_ message: KafkaMessage) throws -> FanoutTask {
        guard let value = message.value else {
            throw PermanentRecordFailure(
                reason: "unreadable_task", message: "the task record has no value (a tombstone); tasks are never deleted", source: message)
        }
        do {
            return try JSONDecoder().decode(FanoutTask.self, from: Data(value))
        } catch {
            throw PermanentRecordFailure(reason: "unreadable_task", message: "the task does not decode: \(error)", source: message)
        }
    }

}

/// Lets bulk lanes step aside while an express lane works, so on a small machine a one-user
/// event does not share the CPU with a broadcast, and a breaking event's tasks run before the
/// bulk work already in progress. A bulk lane checks between pages of recipients and waits
/// while express work is in flight in this process: at most `narrowLimit` per page for narrow
/// work (milliseconds of it), and for breaking work until it is done, out of a budget per task
/// (`breakingBudget`) that keeps the paused task's transaction far from its timeout.
public final class ExpressGate: Sendable {
    private let inFlight = Atomic<Int>(0)
    private let breaking = Atomic<Int>(0)
    /// Pages that waited for breaking work (tests and the bench read it).
    private let pausedPages = Atomic<Int>(0)
    /// Times an express lane of this process told registration writers of a breaking alert
    /// (`TaskDelivery.signalBreaking`; tests read it).
    private let breakingSignals = Atomic<Int>(0)

    static let narrowLimit = Duration.milliseconds(50)
    /// How long one bulk task may stand aside for breaking work in all (its transaction stays
    /// open meanwhile; `PipelineConfiguration.transactionTimeoutMs` is 30 s).
    static let breakingBudget = Duration.seconds(10)

    func enter(breaking isBreaking: Bool = false) {
        inFlight.add(1, ordering: .relaxed)
        if isBreaking { breaking.add(1, ordering: .relaxed) }
    }

    func leave(breaking isBreaking: Bool = false) {
        if isBreaking { breaking.subtract(1, ordering: .relaxed) }
        inFlight.subtract(1, ordering: .relaxed)
    }

    public init() {}

    var isBusy: Bool { inFlight.load(ordering: .relaxed) > 0 }
    var isBreaking: Bool { breaking.load(ordering: .relaxed) > 0 }
    var pagesPausedForBreaking: Int { pausedPages.load(ordering: .relaxed) }
    public var breakingSignalsSent: Int { breakingSignals.load(ordering: .relaxed) }
    func countBreakingSignal() { breakingSignals.add(1, ordering: .relaxed) }

    /// Waits while express work is in flight: narrow work at most `narrowLimit`, breaking work
    /// until it is done or `budget` (what the task has left of `breakingBudget`) is spent.
    func yieldIfBusy(budget: inout Duration) {
        guard isBusy else { return }
        let start = ContinuousClock.now
        while isBusy && !isBreaking && start.duration(to: .now) < Self.narrowLimit { usleep(200) }
        guard isBreaking, budget > .zero else { return }
        pausedPages.add(1, ordering: .relaxed)
        let paused = ContinuousClock.now
        while isBreaking && paused.duration(to: .now) < budget { usleep(1_000) }
        budget = max(.zero, budget - paused.duration(to: .now))
    }
}
