import HeraldKafka
import HeraldTestSupport
import Synchronization
import Testing

/// Consumer-group behaviour the workers rely on: members split partitions, and a rebalance
/// moves partitions without losing records or re-delivering committed ones.
@Suite("Consumer group rebalancing", .heavy)
struct KafkaGroupRebalanceTests {
    let broker: TestBroker

    init() throws { broker = try TestBroker(name: "kafka-group") }

    @Test(
        "two members split a 4-partition topic; a third joining rebalances without loss or re-processing of committed records",
        arguments: [KafkaPartitionAssignmentStrategy.rangeThenRoundRobin, .cooperativeSticky]
    )
    func rebalanceKeepsCommittedProgress(strategy: KafkaPartitionAssignmentStrategy) async throws {
        let topic = TestBroker.uniqueName("rebalance")
        let group = TestBroker.uniqueName("rebalance-group")
        try await broker.createTopic(topic, partitions: 4)
        let total: Int64 = 300
        let producer = try KafkaProducer(configuration: broker.producerConfiguration(), logger: testLogger)
        for number in 0..<100 { try producer.enqueue(KafkaOutgoingMessage(topic: topic, key: "key-\(number)", value: "\(number)")) }
        try await producer.flush()

        let ledger = ProcessingLedger()
        var configuration = broker.consumerConfiguration(group: group)
        configuration.partitionAssignmentStrategy = strategy
        let first = try GroupMember(name: "first", configuration: configuration, topic: topic, ledger: ledger)
        let second = try GroupMember(name: "second", configuration: configuration, topic: topic, ledger: ledger)

        let split = try await eventually {
            try first.consumer.assignment().count == 2 && second.consumer.assignment().count == 2
        }
        try #require(split, "two members did not end up with two partitions each")
        let firstPartitions = Set(try first.consumer.assignment())
        let secondPartitions = Set(try second.consumer.assignment())
        #expect(firstPartitions.isDisjoint(with: secondPartitions))
        #expect(firstPartitions.union(secondPartitions) == Set((0..<4).map { KafkaTopicPartition(topic: topic, partition: $0) }))
        try #require(await eventually { ledger.committedCount >= 100 })

        // The third member joins while records keep arriving, so the rebalance happens mid-stream.
        let third = try GroupMember(name: "third", configuration: configuration, topic: topic, ledger: ledger)
        for number in 100..<Int(total) {
            try producer.enqueue(KafkaOutgoingMessage(topic: topic, key: "key-\(number)", value: "\(number)"))
            if number % 10 == 0 { try await Task.sleep(for: .milliseconds(150)) }
        }
        try await producer.flush()
        await producer.shutdown()

        let finished = try await eventually(timeout: .seconds(180)) {
            try !third.consumer.assignment().isEmpty && ledger.committedCount == total
        }
        let members = [first, second, third]
        for member in members { await member.stop() }
        for member in members { try await member.consumer.close() }

        #expect(finished, "not every record was committed after the third member joined")
        #expect(members.allSatisfy { $0.consumer.membership.waiting() == .zero }, "a settled member still counts as waiting")
        #expect(third.sawAssignment, "the third member never received partitions")
        #expect(first.sawRevocation || second.sawRevocation, "no existing member gave up partitions")
        let snapshot = ledger.snapshot()
        #expect(snapshot.processed == Set(0..<Int(total)), "records were lost")
        #expect(snapshot.violations.isEmpty, "records processed again after their offset was committed: \(snapshot.violations.prefix(10))")
        #expect(snapshot.committedOffsets == snapshot.recordCounts, "every partition committed up to its end")
        let checker = try KafkaConsumer(configuration: configuration, logger: testLogger)
        let committed = try await checker.committed((0..<4).map { KafkaTopicPartition(topic: topic, partition: $0) })
        try await checker.close()
        #expect(committed.map(\.offset).reduce(0, +) == Int64(total), "the group's committed offsets cover every record")
    }
}

extension KafkaGroupRebalanceTests {
    /// On Tansu a group whose leader leaves while it re-forms (the other member left first) keeps
    /// that leader for good, and no later member is ever assigned anything. Members that only
    /// disconnect (`leaveGroupOnClose` false) are dropped after their session instead, leader
    /// included, so the next member gets every partition.
    @Test("members that close without leaving, the leader last, do not keep the next member from its partitions")
    func closedMembersDoNotBlockTheNext() async throws {
        let topic = TestBroker.uniqueName("regroup")
        let group = TestBroker.uniqueName("regroup-group")
        try await broker.createTopic(topic, partitions: 4)
        let configuration = broker.consumerConfiguration(group: group)
        #expect(configuration.leaveGroupOnClose == false)

        // The first member to join leads the group; the second joins once it settled.
        var leader: KafkaConsumer! = try KafkaConsumer(configuration: configuration, logger: testLogger)
        try leader.subscribe(topics: [topic])
        try #require(await eventually { try await Self.settled(leader, owning: 4) }, "the first member never got the partitions")
        var follower: KafkaConsumer! = try KafkaConsumer(configuration: configuration, logger: testLogger)
        try follower.subscribe(topics: [topic])
        let split = try await eventually {
            let leaderSettled = try await Self.settled(leader, owning: 2)
            let followerSettled = try await Self.settled(follower, owning: 2)
            return leaderSettled && followerSettled
        }
        try #require(split, "the two members did not split the partitions")
        // A member that does not leave stays one until it is released, then until its session ends.
        try await follower.close()
        follower = nil
        try await leader.close()
        leader = nil

        let next = try KafkaConsumer(configuration: configuration, logger: testLogger)
        defer { Task { try? await next.close() } }
        try next.subscribe(topics: [topic])
        let joined = try await eventually { try await Self.settled(next, owning: 4) }
        #expect(joined, "the next member was never assigned the partitions (waited \(next.membership.waiting()))")
    }

    /// Polls once (rebalances are served inside polls); true when settled on `count` partitions.
    static func settled(_ consumer: KafkaConsumer, owning count: Int) async throws -> Bool {
        _ = try await consumer.pollBatch(maxMessages: 10, timeout: .milliseconds(100))
        let owned = try consumer.assignment().count
        return consumer.membership.waiting() == .zero && owned == count
    }
}

/// Which records were processed and how far each partition's committed offset got, across
/// all members. Committing offset N commits every record below N in that partition.
final class ProcessingLedger: Sendable {
    struct Snapshot {
        var processed: Set<Int> = []
        var committedOffsets: [KafkaTopicPartition: Int64] = [:]
        var recordCounts: [KafkaTopicPartition: Int64] = [:]
        var violations: [String] = []
        var commitFailures = 0
    }

    private let state = Mutex(Snapshot())

    func process(_ batch: [KafkaMessage], by member: String) {
        state.withLock { state in
            for message in batch {
                let number = Int(text(message.value) ?? "") ?? -1
                if message.offset < state.committedOffsets[message.topicPartition, default: 0] {
                    state.violations.append("\(number) by \(member) at \(message.topicPartition)@\(message.offset)")
                }
                state.processed.insert(number)
                state.recordCounts[message.topicPartition] = max(state.recordCounts[message.topicPartition, default: 0], message.offset + 1)
            }
        }
    }

    func markCommitted(_ offsets: [KafkaTopicPartitionOffset]) {
        state.withLock { state in
            for entry in offsets {
                state.committedOffsets[entry.topicPartition] = max(state.committedOffsets[entry.topicPartition, default: 0], entry.offset)
            }
        }
    }

    func noteCommitFailure() { state.withLock { $0.commitFailures += 1 } }

    /// Records whose offset is below their partition's committed offset.
    var committedCount: Int64 {
        state.withLock { state in state.committedOffsets.values.reduce(0, +) }
    }

    func snapshot() -> Snapshot { state.withLock { $0 } }
}

/// A consumer in the group running the worker loop: poll a batch, process it, commit the
/// progress not yet committed. Progress on partitions that are revoked is dropped, never
/// committed late (that could move the new owner's committed offset backwards).
final class GroupMember: Sendable {
    private final class Flags: Sendable {
        let stopRequested = Atomic<Bool>(false)
        let assigned = Atomic<Bool>(false)
        let revoked = Atomic<Bool>(false)
        let pending = Mutex<[KafkaTopicPartition: Int64]>([:])
    }

    let name: String
    let consumer: KafkaConsumer
    private let flags = Flags()
    private let loop = Mutex<Task<Void, Never>?>(nil)

    init(name: String, configuration: KafkaConsumerConfiguration, topic: String, ledger: ProcessingLedger) throws {
        self.name = name
        let flags = flags
        consumer = try KafkaConsumer(configuration: configuration, logger: testLogger) { event in
            switch event {
            case .assigned(let partitions):
                if !partitions.isEmpty { flags.assigned.store(true, ordering: .relaxed) }
            case .revoked(let partitions), .lost(let partitions):
                if !partitions.isEmpty { flags.revoked.store(true, ordering: .relaxed) }
                flags.pending.withLock { pending in for partition in partitions { pending[partition] = nil } }
            }
        }
        try consumer.subscribe(topics: [topic])
        let task = Task { [consumer] in
            while !flags.stopRequested.load(ordering: .relaxed) {
                let batch = (try? await consumer.pollBatch(maxMessages: 10, timeout: .milliseconds(200))) ?? []
                ledger.process(batch, by: name)
                let offsets = flags.pending.withLock { pending in
                    for message in batch { pending[message.topicPartition] = max(pending[message.topicPartition] ?? 0, message.offset + 1) }
                    return pending.map { KafkaTopicPartitionOffset(topic: $0.key.topic, partition: $0.key.partition, offset: $0.value) }
                }
                guard !offsets.isEmpty else { continue }
                do {
                    try await consumer.commit(offsets)
                    ledger.markCommitted(offsets)
                    flags.pending.withLock { pending in
                        for entry in offsets where pending[entry.topicPartition] == entry.offset { pending[entry.topicPartition] = nil }
                    }
                } catch {
                    // Refused during a rebalance: retried next round unless the partition moves.
                    ledger.noteCommitFailure()
                }
            }
        }
        loop.withLock { $0 = task }
    }

    var sawAssignment: Bool { flags.assigned.load(ordering: .relaxed) }
    var sawRevocation: Bool { flags.revoked.load(ordering: .relaxed) }

    func stop() async {
        flags.stopRequested.store(true, ordering: .relaxed)
        await loop.withLock { $0 }?.value
    }
}
