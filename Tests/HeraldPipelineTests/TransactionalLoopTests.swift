import Foundation
import HeraldKafka
@testable import HeraldPipeline
import HeraldTestSupport
import Logging
import Synchronization
import Testing

/// The consume-transform-produce loop both roles run, against a real broker. The loop sends
/// a batch's consumer offsets while the batch is handled; a handler that fails after they
/// reached the broker must still leave them uncommitted, so the batch is done again.
@Suite("Transactional loop")
struct TransactionalLoopTests {
    struct HandlerFailure: Error {}

    @Test("a batch whose handler fails after its offsets were sent is redone; every record is committed once done")
    func failedBatchIsRedone() async throws {
        let broker = try TestBroker(name: "transactional-loop")
        defer { broker.stop() }
        let admin = try KafkaAdmin(configuration: KafkaAdminConfiguration(bootstrapServers: broker.bootstrapServers), logger: Self.logger)
        let input = TestBroker.uniqueName("loop-input")
        let output = TestBroker.uniqueName("loop-output")
        try await admin.createTopics([KafkaTopicSpec(name: input, partitions: 1), KafkaTopicSpec(name: output, partitions: 1)])

        var plain = KafkaProducerConfiguration(bootstrapServers: broker.bootstrapServers)
        plain.lingerMs = 1
        let publisher = try KafkaProducer(configuration: plain, logger: Self.logger)
        let count = 6
        for number in 0..<count {
            try publisher.enqueue(KafkaOutgoingMessage(topic: input, key: nil, value: Array("in-\(number)".utf8)))
        }
        try await publisher.flush()
        await publisher.shutdown()

        let group = TestBroker.uniqueName("loop-group")
        var consumer = KafkaConsumerConfiguration(bootstrapServers: broker.bootstrapServers, groupId: group)
        consumer.sessionTimeoutMs = 6_000
        consumer.heartbeatIntervalMs = 500
        consumer.autoOffsetReset = .earliest
        consumer.enableAutoCommit = false
        consumer.enableAutoOffsetStore = false
        consumer.isolationLevel = .readCommitted
        var producer = plain
        producer.transactionalId = TestBroker.uniqueName("loop-producer")
        producer.transactionTimeoutMs = 30_000
        producer.messageTimeoutMs = 30_000
        let loop = TransactionalLoop(
            settings: TransactionalLoop.Settings(
                name: "test-loop", topics: [input], consumer: consumer, producer: producer, batchSize: 100,
                gate: TransactionGate()
            ),
            logger: Self.logger
        )

        // Attempts per input record; the first batch fails once, after a pause long enough
        // for its offsets' round trips to have finished.
        let attempts = Mutex<[String: Int]>([:])
        let failedOnce = Atomic<Bool>(false)
        let running = Task {
            try await loop.run { batch, producer in
                var seen: [String: Int] = [:]
                attempts.withLock { attempts in
                    for message in batch {
                        let value = String(decoding: message.value ?? [], as: UTF8.self)
                        attempts[value, default: 0] += 1
                    }
                    seen = attempts
                }
                for message in batch {
                    try producer.enqueue(KafkaOutgoingMessage(topic: output, key: nil, value: Array("out-".utf8) + (message.value ?? [])))
                }
                if !failedOnce.exchange(true, ordering: .acquiringAndReleasing) {
                    try await Task.sleep(for: .milliseconds(300))
                    throw HandlerFailure()
                }
                if (0..<count).allSatisfy({ seen["in-\($0)", default: 0] > 0 }) { loop.stop() }
                return TransactionalLoop.BatchWork()
            }
        }
        defer {
            loop.stop()
            running.cancel()
        }
        let deadline = ContinuousClock.now.advanced(by: .seconds(30))
        while !loop.isStopping, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        try #require(
            loop.isStopping,
            "no batch after the failed one within 30 s: it was not done again (were its offsets committed?), attempts: \(attempts.withLock { $0 })"
        )
        try await running.value

        let handled = attempts.withLock { $0 }
        #expect(handled.keys.sorted() == (0..<count).map { "in-\($0)" }.sorted())
        // The failed batch (one or more records from the first) was handled twice, the rest once.
        let twice = handled.filter { $0.value == 2 }.keys.sorted()
        #expect(!twice.isEmpty && twice.contains("in-0"), "the failed first batch was not redone: \(handled)")
        #expect(handled.values.allSatisfy { $0 == 1 || $0 == 2 })

        let committed = try await Self.committedOffset(broker: broker, group: group, topic: input)
        #expect(committed == Int64(count))
    }

    /// The group's committed offset of partition 0 of `topic`, read without joining the group.
    static func committedOffset(broker: TestBroker, group: String, topic: String) async throws -> Int64? {
        var configuration = KafkaConsumerConfiguration(bootstrapServers: broker.bootstrapServers, groupId: group)
        configuration.enableAutoCommit = false
        let reader = try KafkaConsumer(configuration: configuration, logger: logger)
        let offset = try await reader.committed([KafkaTopicPartition(topic: topic, partition: 0)]).first?.offset
        try await reader.close()
        return offset
    }

    static var logger: Logger {
        var logger = Logger(label: "herald.test.loop")
        logger.logLevel = .warning
        return logger
    }
}
