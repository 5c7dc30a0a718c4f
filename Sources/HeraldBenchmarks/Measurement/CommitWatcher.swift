import Foundation
import HeraldDomain
import HeraldKafka
import Logging
import Synchronization
import HeraldStreams

/// Times a fan-out by its commits instead of by reading its deliveries.
///
/// Every fan-out task writes its `TaskProgress` record to `herald.status` in the same Kafka
/// transaction as the task's deliveries (`TaskDelivery`). So the moment a `read_committed`
/// consumer of the status topic has seen the progress record of every task of an event is
/// the moment the event's last delivery was committed: what issue 4 asks to measure
/// ("publish to last delivery committed"), read from a few dozen small records instead of a
/// million deliveries. Reading the deliveries themselves on the same two cores took 1.7-1.8
/// CPU-us per delivery away from the system being measured (docs/performance.md, "Reading the table");
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
        /// Tasks that report their event stopped.
        var stopped = 0
        /// When the first and the last distinct task's progress record were seen.
        var firstCommitted: Date?
        var lastCommitted: Date?
        /// When the first task began, on the worker's clock (`TaskProgress.startedAt`).
        var firstStarted: Date?
        /// When the planner's `accepted` status was seen: its transaction, which carries the
        /// tasks, had committed.
        var plannerCommitted: Date?

        var isComplete: Bool { taskCount.map { tasks.count >= $0 } ?? false }

        /// Folds in one progress record seen at `now`; a task index seen before is ignored.
        mutating func add(_ progress: TaskProgress, at now: Date) {
            guard tasks.insert(progress.taskIndex).inserted else { return }
            taskCount = progress.taskCount
            delivered += progress.delivered.total
            if progress.stopped { stopped += 1 }
            if firstCommitted == nil { firstCommitted = now }
            firstStarted = min(firstStarted ?? progress.startedAt, progress.startedAt)
            lastCommitted = now
        }
    }

    /// The events seen so far, and the callers waiting for one to complete.
    private struct State {
        var events: [String: EventCommits] = [:]
        var waiters: [Int: (eventId: String, continuation: CheckedContinuation<Bool, Never>)] = [:]
        var nextWaiter = 0
    }

    private let consumer: KafkaConsumer
    private let partitions: [KafkaTopicPartition]
    private let state = Mutex(State())
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
        try consumer.assign(
            (0..<partitions).map {
                KafkaTopicPartitionOffset(topic: topic, partition: Int32($0), offset: KafkaTopicPartitionOffset.beginning)
            })
        self.partitions = (0..<partitions).map { KafkaTopicPartition(topic: topic, partition: Int32($0)) }
        self.logger = logger
    }

    /// Pauses or resumes reading: paused, the reader sends the broker no fetches (its 5 ms
    /// idle fetches would otherwise cost the broker CPU during a measurement it does not time).
    func read(_ enabled: Bool) throws {
        if enabled { try consumer.resume(partitions) } else { try consumer.pause(partitions) }
    }

    func start() {
        let task = Task { [self] in
            while !stopping.load(ordering: .relaxed) {
                do {
                    let batch = try await consumer.pollBatch(maxMessages: 1_000, timeout: .milliseconds(50))
                    guard !batch.isEmpty else { continue }
                    let now = Date()
                    // Progress records time the tasks; the planner's `accepted` statuses mark
                    // its commits. Other statuses share the topic and are skipped. A record
                    // without a type header is taken as progress if it decodes as one (only
                    // progress records carry `taskIndex`).
                    var progress: [TaskProgress] = []
                    var accepted: [String] = []
                    for message in batch {
                        switch StatusCoding.decode(message) {
                        case .progress(let task): progress.append(task)
                        case .status(let status): if status.state == .accepted { accepted.append(status.eventId) }
                        case nil:
                            if let value = message.value, let task = try? StatusCoding.decodeProgress(value) { progress.append(task) }
                        }
                    }
                    record(progress, accepted: accepted, at: now)
                } catch {
                    if stopping.load(ordering: .relaxed) { break }
                    logger.warning("commit watcher poll failed", metadata: ["error": "\(error)"])
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

    /// Folds in one poll's progress records and wakes whoever waits for an event they complete.
    /// `accepted`: events whose planner commit this poll saw.
    func record(_ progress: [TaskProgress], accepted: [String] = [], at now: Date) {
        guard !progress.isEmpty || !accepted.isEmpty else { return }
        let completed = state.withLock { state in
            for eventId in accepted where state.events[eventId]?.plannerCommitted == nil {
                state.events[eventId, default: EventCommits()].plannerCommitted = now
            }
            for entry in progress { state.events[entry.eventId, default: EventCommits()].add(entry, at: now) }
            let done = state.waiters.filter { state.events[$0.value.eventId]?.isComplete == true }
            for key in done.keys { state.waiters[key] = nil }
            return done.values.map(\.continuation)
        }
        for continuation in completed { continuation.resume(returning: true) }
    }

    func commits(_ eventId: String) -> EventCommits {
        state.withLock { $0.events[eventId] } ?? EventCommits()
    }

    /// Returns once `eventId` is complete (true), or after `limit` (false), whichever comes first.
    func completion(of eventId: String, atMost limit: Duration) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let key: Int? = state.withLock { state in
                if state.events[eventId]?.isComplete == true { return nil }
                let key = state.nextWaiter
                state.nextWaiter += 1
                state.waiters[key] = (eventId, continuation)
                return key
            }
            guard let key else {
                continuation.resume(returning: true)
                return
            }
            // Whoever removes the waiter resumes it: `record` on completion, or this timer.
            Task { [self] in
                try? await Task.sleep(for: limit)
                let waiter = state.withLock { $0.waiters.removeValue(forKey: key) }
                waiter?.continuation.resume(returning: false)
            }
        }
    }

    /// Waits until the commit of every task of `eventId` was seen; the poll that sees the last
    /// one wakes the caller. `check` runs first and then every `checkEvery` while waiting, and may
    /// throw to give up early (a worker died); after `timeout` this throws with what was seen.
    ///
    /// Nothing here moves the clock (`lastCommitted` is taken when the poll returned), but the
    /// wait runs on the measured machine: looking every 2 ms and asking `/proc` about every
    /// worker each time took about 3 % of a core away from the fan-out being measured.
    func waitForAll(
        eventId: String, timeout: Duration, checkEvery: Duration = .milliseconds(100), check: () throws -> Void = {}
    ) async throws -> EventCommits {
        let deadline = ContinuousClock.now + timeout
        while true {
            let current = commits(eventId)
            if current.isComplete { return current }
            try check()
            let remaining = ContinuousClock.now.duration(to: deadline)
            if remaining <= .zero {
                throw BenchmarkError(
                    "event \(eventId): saw the commit of \(current.tasks.count) of \(current.taskCount.map(String.init) ?? "?") tasks within \(timeout)",
                    code: "bench_timeout"
                )
            }
            _ = await completion(of: eventId, atMost: min(checkEvery, remaining))
        }
    }
}
