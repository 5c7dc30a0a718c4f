import HeraldKafka
import HeraldTestSupport
import Testing

@Suite("Offsets survive a consumer restart", .heavy)
struct KafkaCommitResumeTests {
    let broker: TestBroker

    init() throws { broker = try TestBroker(name: "kafka-resume") }

    @Test("commit, close, reopen: the group resumes right after the last committed offset")
    func resumeAfterCommit() async throws {
        let topic = TestBroker.uniqueName("resume")
        let group = TestBroker.uniqueName("resume-group")
        try await broker.createTopic(topic, partitions: 1)
        let producer = try KafkaProducer(configuration: broker.producerConfiguration(), logger: testLogger)
        for number in 0..<10 { try producer.enqueue(KafkaOutgoingMessage(topic: topic, key: nil, value: "record-\(number)")) }
        try await producer.flush()
        await producer.shutdown()

        // First run: finish four records, mark them done, commit what was marked.
        var first: KafkaConsumer! = try KafkaConsumer(configuration: broker.consumerConfiguration(group: group), logger: testLogger)
        try first.subscribe(topics: [topic])
        var done: [KafkaMessage] = []
        while done.count < 4 {
            let batch = try await first.pollBatch(maxMessages: 4 - done.count, timeout: .seconds(10))
            try #require(!batch.isEmpty, "no records within 10 s")
            done += batch
        }
        #expect(done.map { text($0.value) } == (0..<4).map { "record-\($0)" })
        for message in done { try first.storeOffset(message) }
        try await first.commitStored()
        let partition = KafkaTopicPartition(topic: topic, partition: 0)
        #expect(try await first.committed([partition]).map(\.offset) == [4])
        let lag = try await first.lag(for: [partition])
        #expect(lag.map(\.lag) == [6], "10 records fetched, 4 committed")
        try await first.close()
        await #expect(throws: KafkaError.self) { try await first.poll() }
        // It closed without leaving the group (as on the embedded broker): released, it is
        // dropped when its session ends.
        first = nil

        // Second run, same group: starts at offset 4, not at the beginning and not at the end.
        let second = try KafkaConsumer(configuration: broker.consumerConfiguration(group: group), logger: testLogger)
        try second.subscribe(topics: [topic])
        let resumed = try await second.collect(6)
        #expect(resumed.map(\.offset) == Array(4..<10))
        #expect(resumed.first.flatMap { text($0.value) } == "record-4")
        try await second.commit(try #require(resumed.last))
        #expect(try await second.committed([partition]).map(\.offset) == [10])
        try await second.close()
    }
}
