import Foundation
import HeraldKafka
import HeraldTestSupport
import Testing

@Suite("Produce and consume", .heavy)
struct KafkaRoundTripTests {
    let broker: TestBroker

    init() throws { broker = try TestBroker(name: "kafka-roundtrip") }

    @Test("keys, headers and values survive a produce/consume round trip byte for byte")
    func roundTrip() async throws {
        let topic = TestBroker.uniqueName("roundtrip")
        try await broker.createTopic(topic, partitions: 1)
        let producer = try KafkaProducer(configuration: broker.producerConfiguration(), logger: testLogger)

        let binary: [UInt8] = [0, 1, 2, 0xff, 0xfe, 0, 10]
        let sent = [
            KafkaOutgoingMessage(
                topic: topic, key: bytes("user-1"), value: bytes("{\"text\":\"Fin du sommet 峰会结束\"}"),
                headers: [
                    KafkaHeader(key: "trace", value: "abc"), KafkaHeader(key: "trace", value: "second"),
                    KafkaHeader(key: "null-header", value: nil), KafkaHeader(key: "empty", value: []),
                ]),
            KafkaOutgoingMessage(topic: topic, key: binary, value: binary),
            KafkaOutgoingMessage(topic: topic, key: bytes("deleted-registration"), value: nil),
            KafkaOutgoingMessage(topic: topic, key: nil, value: []),
        ]
        // The first two through the awaited path, the rest through the fire-and-forget path.
        let first = try await producer.send(sent[0])
        let second = try await producer.send(sent[1])
        #expect(first.topic == topic && first.partition == 0 && first.offset == 0)
        #expect(second.offset == 1)
        try producer.enqueue(sent[2])
        try sent[3].value!.withUnsafeBytes { try producer.enqueue(topic: topic, partition: 0, key: nil, value: $0) }
        try await producer.flush()
        #expect(producer.deliveryFailureCount == 0)
        await producer.shutdown()

        let consumer = try KafkaConsumer(configuration: broker.consumerConfiguration(group: nil), logger: testLogger)
        try consumer.assign([KafkaTopicPartitionOffset(topic: topic, partition: 0, offset: KafkaTopicPartitionOffset.beginning)])
        let received = try await consumer.collect(sent.count)
        try await consumer.close()

        try #require(received.count == sent.count)
        #expect(received.map(\.offset) == [0, 1, 2, 3])
        for (message, original) in zip(received, sent) {
            #expect(message.topic == topic)
            #expect(message.key == original.key)
            #expect(message.value == original.value)
            #expect(message.headers == original.headers)
            #expect(message.timestamp != nil)
        }
        #expect(received[2].value == nil, "a nil value must arrive as a tombstone")
        #expect(received[3].value == [], "an empty value must not turn into a tombstone")
        #expect(received[0].header("trace") == bytes("abc"))
    }

    @Test("a paused partition brings nothing however much it holds; resumed, it brings all of it from where it stood")
    func pauseAndResume() async throws {
        let topic = TestBroker.uniqueName("paused")
        try await broker.createTopic(topic, partitions: 2)
        let producer = try KafkaProducer(configuration: broker.producerConfiguration(), logger: testLogger)
        for index in 0..<400 {
            try producer.enqueue(KafkaOutgoingMessage(topic: topic, partition: 1, key: nil, value: bytes("backlog-\(index)")))
        }
        try await producer.flush()
        let consumer = try KafkaConsumer(configuration: broker.consumerConfiguration(group: nil), logger: testLogger)
        try consumer.assign(
            (0..<2).map { KafkaTopicPartitionOffset(topic: topic, partition: $0, offset: KafkaTopicPartitionOffset.beginning) })
        let first = try await consumer.collect(10)
        #expect(first.map(\.partition) == Array(repeating: 1, count: 10))
        let backlog = KafkaTopicPartition(topic: topic, partition: 1)
        try consumer.pause([backlog])
        for index in 0..<50 {
            try producer.enqueue(KafkaOutgoingMessage(topic: topic, partition: 0, key: nil, value: bytes("first-\(index)")))
        }
        try await producer.flush()
        await producer.shutdown()
        // Whatever the consumer had fetched of the paused partition before the pause is not
        // handed out: only the other partition's records come.
        let urgent = try await consumer.collect(50)
        #expect(urgent.count == 50 && urgent.allSatisfy { $0.partition == 0 }, "\(urgent.map(\.partition))")
        #expect(try await consumer.pollBatch(maxMessages: 10, timeout: .milliseconds(500)).isEmpty)
        try consumer.resume([backlog])
        let rest = try await consumer.collect(390)
        #expect(rest.map(\.offset) == Array(10..<400), "resumed from offset 10")
        try await consumer.close()
    }

    @Test("pollBorrowing hands over the same keys, values and offsets as pollBatch, without copies, and only without a group")
    func borrowingPoll() async throws {
        let topic = TestBroker.uniqueName("borrowing")
        try await broker.createTopic(topic, partitions: 2)
        let producer = try KafkaProducer(configuration: broker.producerConfiguration(), logger: testLogger)
        for index in 0..<300 {
            try producer.enqueue(
                KafkaOutgoingMessage(
                    topic: topic, partition: Int32(index % 2), key: index == 7 ? nil : bytes("k\(index)"),
                    value: index == 9 ? nil : bytes("value-\(index)")
                ))
        }
        try await producer.flush()
        await producer.shutdown()

        let consumer = try KafkaConsumer(configuration: broker.consumerConfiguration(group: nil), logger: testLogger)
        try consumer.assign(
            (0..<2).map { KafkaTopicPartitionOffset(topic: topic, partition: $0, offset: KafkaTopicPartitionOffset.beginning) })
        struct Seen: Sendable, Hashable {
            var partition: Int32
            var offset: Int64
            var key: [UInt8]?
            var value: [UInt8]?
        }
        var seen: [Seen] = []
        let deadline = ContinuousClock.now + .seconds(30)
        while seen.count < 300 && ContinuousClock.now < deadline {
            seen += try await consumer.pollBorrowing(maxMessages: 64, timeout: .milliseconds(200)) { batch in
                #expect(batch.count <= 64)
                return batch.map {
                    Seen(partition: $0.partition, offset: $0.offset, key: $0.key.map(Array.init), value: $0.value.map(Array.init))
                }
            }
        }
        try await consumer.close()
        #expect(seen.count == 300)
        for partition in Int32(0)..<2 {
            let mine = seen.filter { $0.partition == partition }
            #expect(mine.map(\.offset) == Array(0..<150), "partition \(partition) in order, each offset once")
            for record in mine {
                let index = Int(record.offset) * 2 + Int(partition)
                #expect(record.key == (index == 7 ? nil : bytes("k\(index)")))
                #expect(record.value == (index == 9 ? nil : bytes("value-\(index)")))
            }
        }

        let member = try KafkaConsumer(
            configuration: broker.consumerConfiguration(group: TestBroker.uniqueName("group")), logger: testLogger)
        await #expect(throws: KafkaError.self) {
            _ = try await member.pollBorrowing(timeout: .milliseconds(10)) { $0.count }
        }
        try await member.close()
    }

    @Test("wake ends a group consumer's waiting poll with nothing, and a wake with no poll waiting ends the next one at once")
    func wakeEndsAWaitingPoll() async throws {
        let topic = TestBroker.uniqueName("wake")
        try await broker.createTopic(topic, partitions: 1)
        let consumer = try KafkaConsumer(
            configuration: broker.consumerConfiguration(group: TestBroker.uniqueName("wake")), logger: testLogger)
        try consumer.subscribe(topics: [topic])
        // A five-minute poll on an idle topic ends before its timeout only if the wake ends it.
        let timeout = Duration.seconds(300)
        for wakeFirst in [false, true] {
            if wakeFirst { consumer.wake() }
            let waker = Task {
                guard !wakeFirst else { return }
                try await Task.sleep(for: .milliseconds(200))
                consumer.wake()
            }
            let started = ContinuousClock.now
            let batch = try await consumer.pollBatch(timeout: timeout)
            try await waker.value
            #expect(batch.isEmpty)
            #expect(ContinuousClock.now - started < timeout, "the poll ran to its timeout (wake first: \(wakeFirst))")
        }
        try await consumer.close()
    }

    @Test("send reports a failure for a partition that does not exist")
    func sendToMissingPartitionFails() async throws {
        let topic = TestBroker.uniqueName("missing-partition")
        try await broker.createTopic(topic, partitions: 1)
        var configuration = broker.producerConfiguration()
        configuration.messageTimeoutMs = 3_000
        let producer = try KafkaProducer(configuration: configuration, logger: testLogger)
        let error = await #expect(throws: KafkaError.self) {
            try await producer.send(KafkaOutgoingMessage(topic: topic, partition: 7, key: nil, value: bytes("x")))
        }
        #expect(error?.topic == topic)
        #expect(error?.code == .unknownPartition)
        await producer.shutdown()
    }

    @Test("watermarks report the end of the log, from the broker and from fetch responses")
    func watermarks() async throws {
        let topic = TestBroker.uniqueName("watermarks")
        try await broker.createTopic(topic, partitions: 1)
        let producer = try KafkaProducer(configuration: broker.producerConfiguration(), logger: testLogger)
        // One awaited send per record: Tansu's ListOffsets answer is only right per batch.
        for number in 0..<3 { try await producer.send(KafkaOutgoingMessage(topic: topic, key: nil, value: bytes("\(number)"))) }
        await producer.shutdown()

        let consumer = try KafkaConsumer(configuration: broker.consumerConfiguration(group: nil), logger: testLogger)
        #expect(try await consumer.queryWatermarkOffsets(topic: topic, partition: 0) == KafkaWatermarks(low: 0, high: 3))
        #expect(consumer.cachedWatermarkOffsets(topic: topic, partition: 0) == nil)
        try consumer.assign([KafkaTopicPartitionOffset(topic: topic, partition: 0, offset: 1)])
        #expect(try await consumer.collect(2).map(\.offset) == [1, 2])
        #expect(consumer.cachedWatermarkOffsets(topic: topic, partition: 0)?.high == 3)
        try await consumer.close()
    }

    @Test("enqueue waits out a full local queue instead of failing, and every record is delivered")
    func enqueueThroughFullQueue() async throws {
        let topic = TestBroker.uniqueName("queue-full")
        try await broker.createTopic(topic, partitions: 2)
        var configuration = broker.producerConfiguration()
        configuration.queueBufferingMaxMessages = 5
        configuration.compression = .lz4
        let producer = try KafkaProducer(configuration: configuration, logger: testLogger)
        for number in 0..<500 { try producer.enqueue(KafkaOutgoingMessage(topic: topic, key: "k\(number)", value: "v\(number)")) }
        try await producer.flush()
        #expect(producer.deliveredCount == 500)
        #expect(producer.outstandingCount == 0)
        await producer.shutdown()
    }

    @Test("flush reports enqueued records that failed delivery, once")
    func flushReportsEnqueueFailures() async throws {
        // Against a broker that never answers, every record fails at its message timeout, in
        // the delivery reports (a refusal at enqueue would depend on when metadata arrives).
        let silent = try SilentListener()
        var configuration = KafkaProducerConfiguration(bootstrapServers: silent.address)
        configuration.messageTimeoutMs = 1_000
        let producer = try KafkaProducer(configuration: configuration, logger: testLogger)
        let topic = TestBroker.uniqueName("enqueue-failure")
        for _ in 0..<3 { try producer.enqueue(KafkaOutgoingMessage(topic: topic, partition: 9, key: nil, value: bytes("lost"))) }
        let error = await #expect(throws: KafkaError.self) { try await producer.flush() }
        #expect(error?.message.contains("3 enqueued record(s) failed") == true)
        #expect(error?.topic == topic)
        try await producer.flush()
        #expect(producer.deliveryFailureCount == 3)
        #expect(producer.deliveredCount == 0)
        #expect(producer.outstandingCount == 0)
        await producer.shutdown()
    }

    @Test("a producer that reports only failures: topic handles write the same records, failures still reach flush, send is refused")
    func failureOnlyReportsAndTopicHandles() async throws {
        let topic = TestBroker.uniqueName("failure-only")
        try await broker.createTopic(topic, partitions: 1)
        // Failures are reported: against a broker that never answers, each record fails at its
        // message timeout, and flush reports them.
        let silent = try SilentListener()
        var unanswered = KafkaProducerConfiguration(bootstrapServers: silent.address)
        unanswered.messageTimeoutMs = 1_000
        unanswered.reportsSuccessfulDeliveries = false
        let failing = try KafkaProducer(configuration: unanswered, logger: testLogger)
        let failingHandle = try failing.topic(topic)
        for _ in 0..<3 {
            try bytes("lost").withUnsafeBytes { try failing.enqueue(to: failingHandle, partition: 9, key: nil, value: $0) }
        }
        let error = await #expect(throws: KafkaError.self) { try await failing.flush() }
        #expect(error?.message.contains("3 enqueued record(s) failed") == true)
        #expect(failing.deliveryFailureCount == 3)
        #expect(failing.outstandingCount == 0)
        await failing.shutdown()

        var configuration = broker.producerConfiguration()
        configuration.reportsSuccessfulDeliveries = false
        let producer = try KafkaProducer(configuration: configuration, logger: testLogger)
        let handle = try producer.topic(topic)
        #expect(try producer.topic(topic) === handle)
        let stamp: Int64 = 1_700_000_000_123
        for number in 0..<2 {
            try bytes("key\(number)").withUnsafeBytes { key in
                try bytes("value\(number)").withUnsafeBytes { value in
                    try producer.enqueue(to: handle, key: key, value: value, timestampMs: stamp + Int64(number))
                }
            }
        }
        // Without success reports, flush steps in 1 ms waits until every record is acknowledged.
        for number in 0..<50 {
            try bytes("more\(number)").withUnsafeBytes { try producer.enqueue(to: handle, key: nil, value: $0) }
        }
        try await producer.flush()
        #expect(producer.outstandingCount == 0)
        #expect(producer.deliveredCount == 0, "successful records are not reported")
        #expect(producer.deliveryFailureCount == 0)

        let refused = await #expect(throws: KafkaError.self) {
            try await producer.send(KafkaOutgoingMessage(topic: topic, key: nil, value: bytes("x")))
        }
        #expect(refused?.code == .invalidArgument)
        let other = try KafkaProducer(configuration: broker.producerConfiguration(), logger: testLogger)
        let foreign = #expect(throws: KafkaError.self) {
            try bytes("x").withUnsafeBytes { try other.enqueue(to: handle, key: nil, value: $0) }
        }
        #expect(foreign?.message.contains("another producer") == true)
        await other.shutdown()
        await producer.shutdown()

        let consumer = try KafkaConsumer(configuration: broker.consumerConfiguration(group: nil), logger: testLogger)
        try consumer.assign([KafkaTopicPartitionOffset(topic: topic, partition: 0, offset: 0)])
        let all = try await consumer.collect(52)
        #expect(all.dropFirst(2).map(\.value) == (0..<50).map { bytes("more\($0)") })
        let received = Array(all.prefix(2))
        #expect(received.map(\.key) == [bytes("key0"), bytes("key1")])
        #expect(received.map(\.value) == [bytes("value0"), bytes("value1")])
        #expect(received.map { $0.timestamp.map { Int64(($0.timeIntervalSince1970 * 1_000).rounded()) } } == [stamp, stamp + 1])
        try await consumer.close()
    }
}
