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
        kind: TaskLane, index: Int, configuration: PipelineConfiguration, templates: TemplateCache, logger: Logger,
        metrics: PipelineMetrics = .shared
    ) {
        self.lane = kind
        self.index = index
        self.logger = logger
        self.configuration = configuration
        let name = "fanout-\(kind.rawValue)-\(index)"
        delivery = TaskDelivery(
            lane: kind, name: name, configuration: configuration, templates: templates, logger: logger, metrics: metrics)
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
            deadLetterTopic: configuration.topics.eventsDeadLetters,
            directReads: direct ? DirectReads.Settings(consumer: configuration.directReadConfiguration(lane: name)) : nil
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
/// event does not share the CPU with a broadcast. A bulk lane checks between pages of
/// recipients and waits (bounded) while express work is in flight in this process.
final class ExpressGate: Sendable {
    static let shared = ExpressGate()

    private let inFlight = Atomic<Int>(0)

    func enter() { inFlight.add(1, ordering: .relaxed) }
    func leave() { inFlight.subtract(1, ordering: .relaxed) }

    var isBusy: Bool { inFlight.load(ordering: .relaxed) > 0 }

    /// Waits while express work is in flight, at most `limit`.
    func yieldIfBusy(limit: Duration = .milliseconds(50)) {
        guard isBusy else { return }
        let deadline = ContinuousClock.now + limit
        while isBusy && ContinuousClock.now < deadline { usleep(200) }
    }
}
