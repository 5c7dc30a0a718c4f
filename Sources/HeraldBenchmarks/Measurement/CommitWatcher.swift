import Foundation
import HeraldDomain
import HeraldKafka
import Logging
import Synchronization

/// Times a fan-out by its commits instead of by reading its deliveries.
///
/// Every fan-out task writes its `TaskProgress` record to `herald.status` in the same Kafka
/// transaction as the task's deliveries (`TaskDelivery`). So the moment a `read_committed`
/// consumer of the status topic has seen the progress record of every task of an event is
/// the moment the event's last delivery was committed: what issue 4 asks to measure
/// ("publish to last delivery committed"), read from a few dozen small records instead of a
/// million deliveries. Reading the deliveries themselves on the same two cores took 1.7-1.8
/// CPU-us per delivery away from the system being measured (docs/performance.md, item 40);
/// with this clock the bench reads and counts them after the clock stopped.
///
/// Progress records are counted once per task index, so a task redone after an aborted
/// transaction is not counted twice (on brokers that hide aborted records from
/// `read_committed` readers, which the embedded one does not: docs/operations.md).
final class CommitWatcher: Sendable {
    struct EventCommits: Sendable {
        /// `taskCount` of the event's progress records (nil until the first arrived).
        var taskCount: Int?
        var tasks: Set<Int> = []
        /// Deliveries the distinct tasks report, summed.
        var delivered = 0
        /// When the first and the last distinct task's progress record were seen.
        var firstCommitted: Date?
        var lastCommitted: Date?

        var isComplete: Bool { taskCount.map { tasks.count >= $0 } ?? false }

        /// Folds in one progress record seen at `now`; a task index seen before is ignored.
        mutating func add(_ progress: TaskProgress, at now: Date) {
            guard tasks.insert(progress.taskIndex).inserted else { return }
            taskCount = progress.taskCount
            delivered += progress.delivered.total
            if firstCommitted == nil { firstCommitted = now }
            lastCommitted = now
        }
    }

    private let consumer: KafkaConsumer
    private let events = Mutex<[String: EventCommits]>([:])
    private let stopping = Atomic<Bool>(false)
    private let loop = Mutex<Task<Void, Never>?>(nil)
    private let logger: Logger

    init(bootstrapServers: String, topic: String, partitions: Int, extra: [String: String] = [:], logger: Logger) throws {
        var configuration = KafkaConsumerConfiguration(bootstrapServers: bootstrapServers)
        configuration.clientId = "herald-bench-commits"
        configuration.isolationLevel = .readCommitted
        configuration.maxPollRecords = 1_000
        // The clock's resolution: an idle fetch returns after at most this long.
        configuration.fetchWaitMaxMs = 5
        configuration.extra = extra
        consumer = try KafkaConsumer(configuration: configuration, logger: logger)
        try consumer.assign((0..<partitions).map {
            KafkaTopicPartitionOffset(topic: topic, partition: Int32($0), offset: KafkaTopicPartitionOffset.beginning)
        })
        self.logger = logger
    }

    func start() {
        let task = Task { [self] in
            let decoder = JSONDecoder()
            while !stopping.load(ordering: .relaxed) {
                do {
                    let batch = try await consumer.pollBatch(maxMessages: 1_000, timeout: .milliseconds(50))
                    guard !batch.isEmpty else { continue }
                    let now = Date()
                    // Final statuses (`StatusRecord`) share the topic; only progress records
                    // carry `taskIndex`, so anything else fails to decode and is skipped.
                    let progress = batch.compactMap { message in
                        message.value.flatMap { try? decoder.decode(TaskProgress.self, from: Data($0)) }
                    }
                    record(progress, at: now)
                } catch {
                    if stopping.load(ordering: .relaxed) { break }
                    logger.warning("commit watcher poll failed: \(error)")
                    try? await Task.sleep(for: .milliseconds(50))
                }
            }
        }
        loop.withLock { $0 = task }
    }

    func stop() async {
        stopping.store(true, ordering: .relaxed)
        if let task = loop.withLock({ $0 }) { await task.value }
        try? await consumer.close()
    }

    func record(_ progress: [TaskProgress], at now: Date) {
        guard !progress.isEmpty else { return }
        events.withLock { events in
            for entry in progress { events[entry.eventId, default: EventCommits()].add(entry, at: now) }
        }
    }

    func commits(_ eventId: String) -> EventCommits {
        events.withLock { $0[eventId] } ?? EventCommits()
    }

    /// Waits until the commit of every task of `eventId` was seen. `check` runs between looks
    /// and may throw to give up early (a worker died); after `timeout` this throws with what
    /// was seen.
    func waitForAll(eventId: String, timeout: Duration, check: () throws -> Void = {}) async throws -> EventCommits {
        let deadline = ContinuousClock.now + timeout
        while true {
            let current = commits(eventId)
            if current.isComplete { return current }
            try check()
            if ContinuousClock.now >= deadline {
                throw BenchmarkError(
                    "event \(eventId): saw the commit of \(current.tasks.count) of \(current.taskCount.map(String.init) ?? "?") tasks within \(timeout)",
                    code: "bench_timeout"
                )
            }
            try await Task.sleep(for: .milliseconds(2))
        }
    }
}
