import Foundation
@testable import HeraldBenchmarks
import HeraldDomain
import HeraldKafka
import HeraldTestSupport
import Logging
import Synchronization
import Testing

/// The bench's commit clock (`--clock committed`) stops when the progress record of every
/// task was seen; it is only honest if a task counts once, and only once its transaction
/// committed.
@Suite("Commit clock", .heavy)
struct CommitWatcherTests {
    private func progress(_ event: String, task: Int, of count: Int, delivered: Int) -> TaskProgress {
        let now = Date()
        return TaskProgress(
            eventId: event, taskIndex: task, taskCount: count, delivered: DeliveryCounts(total: delivered), startedAt: now, finishedAt: now
        )
    }

    @Test("an event is complete once every task index was seen; a task seen again counts once")
    func bookkeeping() {
        let start = Date(timeIntervalSince1970: 1_000)
        var commits = CommitWatcher.EventCommits()
        #expect(!commits.isComplete)
        commits.add(progress("e", task: 1, of: 3, delivered: 10), at: start)
        commits.add(progress("e", task: 0, of: 3, delivered: 20), at: start + 1)
        // Task 1 redone (its first transaction aborted on a broker that shows aborted records).
        commits.add(progress("e", task: 1, of: 3, delivered: 10), at: start + 2)
        #expect(!commits.isComplete)
        #expect(commits.delivered == 30)
        #expect(commits.lastCommitted == start + 1)
        commits.add(progress("e", task: 2, of: 3, delivered: 5), at: start + 3)
        #expect(commits.isComplete)
        #expect(commits.tasks == [0, 1, 2])
        #expect(commits.delivered == 35)
        #expect(commits.firstCommitted == start)
        #expect(commits.lastCommitted == start + 3)
    }

    @Test("a task's progress record is seen only once its transaction committed; other status records are ignored")
    func onlyCommittedTasks() async throws {
        let broker = try TestBroker(name: "commit-clock")
        defer { broker.stop() }
        let logger = Logger(label: "test.commit-clock")
        let topic = TestBroker.uniqueName("commits")
        let admin = try KafkaAdmin(configuration: KafkaAdminConfiguration(bootstrapServers: broker.bootstrapServers), logger: logger)
        try await admin.createTopics([KafkaTopicSpec(name: topic, partitions: 1, replicationFactor: 1)], ignoreExisting: true)

        var configuration = KafkaProducerConfiguration(bootstrapServers: broker.bootstrapServers)
        configuration.lingerMs = 1
        configuration.messageTimeoutMs = 30_000
        configuration.transactionalId = TestBroker.uniqueName("commit-clock-producer")
        let producer = try KafkaProducer(configuration: configuration, logger: logger)
        try await producer.initTransactions()
        func send(_ record: TaskProgress) throws {
            try producer.enqueue(
                KafkaOutgoingMessage(
                    topic: topic, partition: 0, key: Array(record.eventId.utf8), value: Array(try JSONEncoder().encode(record))
                ))
        }

        let watcher = try CommitWatcher(bootstrapServers: broker.bootstrapServers, topic: topic, partitions: 1, logger: logger)
        watcher.start()

        // Open transaction: the record is on the broker, but not committed.
        try producer.beginTransaction()
        try send(progress("e", task: 0, of: 2, delivered: 7))
        try await producer.flush()
        try await Task.sleep(for: .milliseconds(1_500))
        #expect(watcher.commits("e").tasks.isEmpty, "a progress record was counted before its transaction committed")
        try await producer.commitTransaction()
        try await waitUntil { watcher.commits("e").tasks == [0] }

        // A final status record shares the topic and is not a task; task 0 again counts once.
        try producer.beginTransaction()
        try producer.enqueue(
            KafkaOutgoingMessage(
                topic: topic, partition: 0, key: Array("e".utf8), value: Array(#"{"eventId":"e","state":"completed"}"#.utf8)
            ))
        try send(progress("e", task: 0, of: 2, delivered: 7))
        try send(progress("e", task: 1, of: 2, delivered: 5))
        try await producer.commitTransaction()
        let commits = try await watcher.waitForAll(eventId: "e", timeout: .seconds(30))
        #expect(commits.tasks == [0, 1])
        #expect(commits.delivered == 12)

        await watcher.stop()
        await producer.shutdown()
        try? await admin.deleteTopics([topic], ignoreMissing: true)
    }

    /// A watcher whose consumer is never started (nothing listens at its address): the tests
    /// hand it progress records through `record`, as its poll loop would.
    private func unstartedWatcher() throws -> CommitWatcher {
        try CommitWatcher(
            bootstrapServers: "127.0.0.1:1", topic: "unused", partitions: 1,
            logger: Logger(label: "test.commit-wait") { _ in SwiftLogNoOpLogHandler() })
    }

    @Test("the record that completes an event wakes its waiter, not its timer; other events' records do not")
    func wakesOnCompletion() async throws {
        let watcher = try unstartedWatcher()
        watcher.record([progress("e", task: 0, of: 2, delivered: 3)], at: Date())
        // Woken by the timer, this would return false (after a minute).
        async let completed = watcher.completion(of: "e", atMost: .seconds(60))
        try await Task.sleep(for: .milliseconds(20))
        watcher.record([progress("other", task: 0, of: 1, delivered: 1)], at: Date())
        watcher.record([progress("e", task: 1, of: 2, delivered: 4)], at: Date())
        #expect(await completed)
        #expect(await watcher.completion(of: "e", atMost: .seconds(60)), "an event already complete returns at once")
        #expect(await !watcher.completion(of: "never", atMost: .milliseconds(10)))

        let checks = Mutex(0)
        let commits = try await watcher.waitForAll(eventId: "e", timeout: .seconds(60)) { checks.withLock { $0 += 1 } }
        #expect(commits.delivered == 7)
        #expect(checks.withLock { $0 } == 0, "a complete event is returned before any check")
        await watcher.stop()
    }

    @Test(
        "while nothing completes, the check runs every checkEvery and its error ends the wait; with no check, the timeout says what was seen"
    )
    func checksAndTimesOut() async throws {
        struct WorkerExited: Error {}
        let watcher = try unstartedWatcher()
        watcher.record([progress("e", task: 0, of: 3, delivered: 5)], at: Date())
        let checks = Mutex(0)
        await #expect(throws: WorkerExited.self) {
            _ = try await watcher.waitForAll(eventId: "e", timeout: .seconds(120), checkEvery: .milliseconds(10)) {
                let count = checks.withLock {
                    $0 += 1
                    return $0
                }
                if count == 3 { throw WorkerExited() }
            }
        }
        #expect(checks.withLock { $0 } == 3)

        let error = await #expect(throws: BenchmarkError.self) {
            _ = try await watcher.waitForAll(eventId: "e", timeout: .milliseconds(50))
        }
        #expect(error?.code == "bench_timeout")
        #expect(error?.message.contains("1 of 3 tasks") == true)
        await watcher.stop()
    }

    private func waitUntil(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while !condition() {
            try #require(ContinuousClock.now < deadline, "not reached within 30 s")
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}

@Suite("Delivery watcher bookkeeping")
struct DeliveryWatcherTests {
    @Test("the count seen at a moment is the running count of the last poll before it")
    func countAtMoment() {
        let start = Date(timeIntervalSince1970: 1_000)
        var stats = DeliveryWatcher.EventStats()
        stats.progress = [(start, 10), (start + 1, 250), (start + 2, 1_000)]
        #expect(stats.count(at: start - 1) == 0)
        #expect(stats.count(at: start) == 10)
        #expect(stats.count(at: start + 1.5) == 250)
        #expect(stats.count(at: start + 60) == 1_000)
    }

    @Test("the event id is read from the opening of a delivery record and nothing else")
    func eventIdOfRecord() {
        let record = Array(#"{"deliveryId":"bn-7/reg-1/newsTemplate","eventId":"bn-7"}"#.utf8)
        #expect(DeliveryWatcher.eventIdBytes(record).map { String(decoding: $0, as: UTF8.self) } == "bn-7")
        #expect(DeliveryWatcher.eventIdBytes(Array(#"{"eventId":"bn-7"}"#.utf8)) == nil)
        #expect(DeliveryWatcher.eventIdBytes(Array(#"{"deliveryId":"no-slash"}"#.utf8)) == nil)
        // A hub other than the default one comes first, in front of the delivery id.
        #expect(
            DeliveryWatcher.eventIdBytes(Array(#"{"hub":"bench-sports","deliveryId":"bn-8/r1/t","eventId":"bn-8"}"#.utf8))
                .map { String(decoding: $0, as: UTF8.self) } == "bn-8")
        #expect(DeliveryWatcher.eventIdBytes(Array(#"{"hub":"bench-sports","eventId":"bn-8"}"#.utf8)) == nil)
    }
}
