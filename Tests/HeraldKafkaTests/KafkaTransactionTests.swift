import Foundation
import HeraldKafka
import HeraldTestSupport
import Testing

/// Consume-transform-produce with Kafka transactions, as the planner and fan-out roles use it.
///
/// Guarantees checked: (1) after `commitTransaction`, a `read_committed` consumer sees the
/// output and the group's input offsets are committed; (2) after `abortTransaction`, the
/// group's input offsets are NOT committed (checkable on every broker); (3) after abort, a
/// `read_committed` consumer does not see the aborted records — only checked against Apache
/// Kafka (`HERALD_TEST_KAFKA_BROKERS`), because Tansu does not filter aborted transactions.
@Suite("Transactions", .heavy)
struct KafkaTransactionTests {
    let broker: TestBroker

    init() throws { broker = try TestBroker(name: "kafka-txn") }

    /// Input topic with `count` records, and a group member that has read them all.
    private func consumedInput(count: Int) async throws -> (topic: String, consumer: KafkaConsumer, messages: [KafkaMessage]) {
        let input = TestBroker.uniqueName("txn-input")
        try await broker.createTopic(input, partitions: 1)
        let producer = try KafkaProducer(configuration: broker.producerConfiguration(), logger: testLogger)
        for number in 0..<count { try producer.enqueue(KafkaOutgoingMessage(topic: input, key: "k\(number)", value: "in-\(number)")) }
        try await producer.flush()
        await producer.shutdown()
        let consumer = try KafkaConsumer(
            configuration: broker.consumerConfiguration(group: TestBroker.uniqueName("txn-group")), logger: testLogger)
        try consumer.subscribe(topics: [input])
        let messages = try await consumer.collect(count)
        try #require(messages.count == count)
        return (input, consumer, messages)
    }

    private func transactionalProducer() throws -> KafkaProducer {
        var configuration = broker.producerConfiguration()
        configuration.transactionalId = TestBroker.uniqueName("txn-producer")
        return try KafkaProducer(configuration: configuration, logger: testLogger)
    }

    /// What a `read_committed` reader sees from the start of `topic` up to the first record
    /// whose value is `marker` (or `count` records when no marker is given).
    private func readCommitted(_ topic: String, until marker: String? = nil, count: Int = .max) async throws -> [KafkaMessage] {
        var configuration = broker.consumerConfiguration(group: nil)
        configuration.isolationLevel = .readCommitted
        let reader = try KafkaConsumer(configuration: configuration, logger: testLogger)
        try reader.assign([KafkaTopicPartitionOffset(topic: topic, partition: 0, offset: KafkaTopicPartitionOffset.beginning)])
        let deadline = ContinuousClock.now.advanced(by: .seconds(15))
        var messages: [KafkaMessage] = []
        while ContinuousClock.now < deadline, messages.count < count {
            messages += try await reader.pollBatch(timeout: .milliseconds(250))
            if let marker, messages.contains(where: { text($0.value) == marker }) { break }
        }
        try await reader.close()
        return messages
    }

    @Test("committed transaction: output visible to read_committed and input offsets committed with it")
    func commitMakesOutputAndOffsetsVisible() async throws {
        let (input, consumer, messages) = try await consumedInput(count: 5)
        let output = TestBroker.uniqueName("txn-output")
        try await broker.createTopic(output, partitions: 1)
        let producer = try transactionalProducer()
        try await producer.initTransactions()

        try producer.beginTransaction()
        for message in messages {
            try producer.enqueue(KafkaOutgoingMessage(topic: output, key: message.key, value: Array("out-".utf8) + (message.value ?? [])))
        }
        try await producer.sendOffsetsToTransaction([try #require(messages.last).nextOffset], groupMetadata: consumer.groupMetadata())
        try await producer.commitTransaction()

        let visible = try await readCommitted(output, count: 5)
        #expect(visible.map { text($0.value) } == (0..<5).map { "out-in-\($0)" })
        let committed = try await consumer.committed([KafkaTopicPartition(topic: input, partition: 0)])
        #expect(committed.map(\.offset) == [5])
        try await consumer.close()
        await producer.shutdown()
    }

    @Test("aborted transaction: the input offsets sent with it are not committed")
    func abortCommitsNoOffsets() async throws {
        let (input, consumer, messages) = try await consumedInput(count: 4)
        let output = TestBroker.uniqueName("txn-aborted")
        try await broker.createTopic(output, partitions: 1)
        let producer = try transactionalProducer()
        try await producer.initTransactions()
        let partition = KafkaTopicPartition(topic: input, partition: 0)

        // A committed transaction moves the group to offset 2 ...
        try producer.beginTransaction()
        try producer.enqueue(KafkaOutgoingMessage(topic: output, key: nil, value: "kept"))
        try await producer.sendOffsetsToTransaction([messages[1].nextOffset], groupMetadata: consumer.groupMetadata())
        try await producer.commitTransaction()
        #expect(try await consumer.committed([partition]).map(\.offset) == [2])

        // ... an aborted one that tried to move it to 4 leaves it at 2.
        try producer.beginTransaction()
        for number in 0..<3 { try producer.enqueue(KafkaOutgoingMessage(topic: output, key: nil, value: "aborted-\(number)")) }
        try await producer.sendOffsetsToTransaction([messages[3].nextOffset], groupMetadata: consumer.groupMetadata())
        try await producer.abortTransaction()
        #expect(try await consumer.committed([partition]).map(\.offset) == [2])

        // The producer is usable again after an abort.
        try producer.beginTransaction()
        try producer.enqueue(KafkaOutgoingMessage(topic: output, key: nil, value: "after-abort"))
        try await producer.commitTransaction()
        let visible = try await readCommitted(output, until: "after-abort").compactMap { text($0.value) }
        #expect(visible.first == "kept")
        #expect(visible.last == "after-abort")
        try await consumer.close()
        await producer.shutdown()
    }

    /// Sends offsets up to 6 in a transaction that aborts, after one that committed offset 2,
    /// then commits an unrelated transaction without offsets, from the same producer or from
    /// a new instance with the same transactional id. Returns the group's committed offset.
    private func offsetAfterAbortThenCommit(replacingProducer: Bool) async throws -> Int64? {
        let (input, consumer, messages) = try await consumedInput(count: 6)
        let output = TestBroker.uniqueName("txn-after-abort")
        try await broker.createTopic(output, partitions: 1)
        var configuration = broker.producerConfiguration()
        configuration.transactionalId = TestBroker.uniqueName("txn-after-abort")
        var producer = try KafkaProducer(configuration: configuration, logger: testLogger)
        try await producer.initTransactions()
        try producer.beginTransaction()
        try producer.enqueue(KafkaOutgoingMessage(topic: output, key: nil, value: "kept"))
        try await producer.sendOffsetsToTransaction([messages[1].nextOffset], groupMetadata: consumer.groupMetadata())
        try await producer.commitTransaction()

        try producer.beginTransaction()
        try producer.enqueue(KafkaOutgoingMessage(topic: output, key: nil, value: "aborted"))
        try await producer.sendOffsetsToTransaction([messages[5].nextOffset], groupMetadata: consumer.groupMetadata())
        try await producer.abortTransaction()

        if replacingProducer {
            await producer.shutdown()
            producer = try KafkaProducer(configuration: configuration, logger: testLogger)
            try await producer.initTransactions()
        }
        try producer.beginTransaction()
        try producer.enqueue(KafkaOutgoingMessage(topic: output, key: nil, value: "unrelated"))
        try await producer.commitTransaction()
        let committed = try await consumer.committed([KafkaTopicPartition(topic: input, partition: 0)]).first?.offset
        try await consumer.close()
        await producer.shutdown()
        return committed
    }

    @Test("after an abort, a replaced producer's next commit never commits the aborted transaction's offsets")
    func abortedOffsetsStayUncommittedWithAReplacedProducer() async throws {
        // Three rounds: on Tansu the same producer carries the offsets over in about half of them.
        for _ in 0..<3 {
            #expect(try await offsetAfterAbortThenCommit(replacingProducer: true) == 2)
        }
    }

    /// Why the transactional loop replaces its producer after every abort: Tansu sometimes
    /// keeps an aborted transaction's offsets and commits them with the same producer's next
    /// transaction, so the aborted batch's records count as consumed without having been
    /// handled: a poison record "vanished" that way. Apache Kafka discards them. How often
    /// Tansu does it depends on timing (3 of 5 rounds on an idle machine, 0 of 8 while the
    /// whole suite ran), so on Tansu this test counts the rounds it happened in rather than
    /// requiring it; on Apache Kafka it must never happen.
    @Test("the same producer's next commit never carries the aborted offsets on Apache Kafka; on Tansu it may")
    func abortedOffsetsRideOnTheSameProducersNextCommit() async throws {
        var observed: [Int64?] = []
        for _ in 0..<3 {
            observed.append(try await offsetAfterAbortThenCommit(replacingProducer: false))
        }
        if broker.isExternal {
            #expect(observed.allSatisfy { $0 == 2 }, "\(observed)")
        } else {
            #expect(observed.allSatisfy { $0 == 2 || $0 == 6 }, "\(observed)")
            print(
                "Tansu carried an aborted transaction's offsets into the next commit in \(observed.count { $0 == 6 }) of \(observed.count) rounds"
            )
        }
    }

    /// librdkafka's mock cluster, a second Kafka implementation in the runtime Herald loads:
    /// its read_committed consumers see aborted records too (librdkafka 2.16), like Tansu's,
    /// so it cannot stand in for Apache Kafka in the exactly-once tests. The same finding as
    /// bench/probes/librdkafka-mock-read-committed.c; if a librdkafka release fixes it, this
    /// test fails and the mock cluster becomes usable for those tests.
    @Test("librdkafka's mock cluster shows aborted records to read_committed consumers")
    func mockClusterDoesNotFilterAbortedRecords() async throws {
        var configuration = KafkaProducerConfiguration(bootstrapServers: "127.0.0.1:1")
        configuration.transactionalId = TestBroker.uniqueName("mock-txn")
        configuration.extra = ["test.mock.num.brokers": "1"]
        configuration.messageTimeoutMs = 30_000
        let producer = try KafkaProducer(configuration: configuration, logger: testLogger)
        let bootstraps = try #require(producer.mockClusterBootstraps)
        try await producer.initTransactions()
        try producer.beginTransaction()
        for _ in 0..<20 { try producer.enqueue(KafkaOutgoingMessage(topic: "mock-probe", partition: 0, key: nil, value: "aborted")) }
        try await producer.flush()
        try await producer.abortTransaction()
        try producer.beginTransaction()
        try producer.enqueue(KafkaOutgoingMessage(topic: "mock-probe", partition: 0, key: nil, value: "marker"))
        try await producer.commitTransaction()

        var readerConfiguration = KafkaConsumerConfiguration(bootstrapServers: bootstraps, groupId: TestBroker.uniqueName("mock-reader"))
        readerConfiguration.isolationLevel = .readCommitted
        readerConfiguration.enableAutoCommit = false
        let reader = try KafkaConsumer(configuration: readerConfiguration, logger: testLogger)
        try reader.assign([KafkaTopicPartitionOffset(topic: "mock-probe", partition: 0, offset: KafkaTopicPartitionOffset.beginning)])
        var values: [String] = []
        let deadline = ContinuousClock.now.advanced(by: .seconds(15))
        while ContinuousClock.now < deadline, !values.contains("marker") {
            values += try await reader.pollBatch(timeout: .milliseconds(200)).compactMap { text($0.value) }
        }
        try await reader.close()
        await producer.shutdown()
        #expect(values.last == "marker")
        #expect(values.filter { $0 == "aborted" }.count == 20, "read_committed saw \(values.count - 1) aborted records")
    }

    @Test(
        "aborted transaction: records are invisible to read_committed (Apache Kafka only; Tansu does not filter them)",
        .enabled(if: ProcessInfo.processInfo.environment[TestBroker.externalBrokersVariable] != nil)
    )
    func abortedRecordsAreInvisible() async throws {
        let output = TestBroker.uniqueName("txn-invisible")
        try await broker.createTopic(output, partitions: 1)
        let producer = try transactionalProducer()
        try await producer.initTransactions()
        try producer.beginTransaction()
        for number in 0..<3 { try producer.enqueue(KafkaOutgoingMessage(topic: output, key: nil, value: "aborted-\(number)")) }
        try await producer.abortTransaction()
        try producer.beginTransaction()
        try producer.enqueue(KafkaOutgoingMessage(topic: output, key: nil, value: "committed"))
        try await producer.commitTransaction()

        // Reading up to the committed marker proves the reader got past the aborted range.
        let visible = try await readCommitted(output, until: "committed")
        #expect(visible.compactMap { text($0.value) } == ["committed"])
        await producer.shutdown()
    }
}
