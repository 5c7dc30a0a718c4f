import Foundation
import HeraldDomain
import HeraldKafka
@testable import HeraldPipeline
import HeraldRedis
import HeraldTestSupport
import Logging
import Synchronization
import Testing

/// The consume-transform-produce loop both roles run, against a real broker. The loop sends
/// a batch's consumer offsets while the batch is handled; a handler that fails after they
/// reached the broker must still leave them uncommitted, so the batch is done again.
@Suite("Transactional loop", .heavy)
struct TransactionalLoopTests {
    struct HandlerFailure: Error {}

    @Test("a batch whose handler fails after its offsets were sent is redone; every record is committed once done")
    func failedBatchIsRedone() async throws {
        let broker = try TestBroker(name: "transactional-loop")
        defer { broker.stop() }
        let count = 6
        let (loop, input, output, group) = try await Self.loopOverInput(broker: broker, count: count, deadLetterTopic: false)

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
        // Fails when the attempts stop changing: the failed batch was not done again (were its
        // offsets committed?).
        try await waitWhileProgressing("every record handled after the failed batch") {
            () async throws -> ProgressCheck<[String: Int], Void> in
            loop.isStopping ? .done(()) : .waiting(attempts.withLock { $0 })
        }
        try await running.value

        let handled = attempts.withLock { $0 }
        #expect(handled.keys.sorted() == (0..<count).map { "in-\($0)" }.sorted())
        // The failed batch (one or more records from the first) was handled twice, the rest once.
        let twice = handled.filter { $0.value == 2 }.keys.sorted()
        #expect(!twice.isEmpty && twice.contains("in-0"), "the failed first batch was not redone: \(handled)")
        #expect(handled.values.allSatisfy { $0 == 1 || $0 == 2 })

        let committed = try await Self.committedOffset(broker: broker, group: group, topic: input) ?? -1
        #expect(committed == Int64(count))
    }

    @Test("a record whose output is over the size limit is dead-lettered; the rest of its batch is delivered and the offsets advance")
    func oversizeOutputIsDeadLettered() async throws {
        let broker = try TestBroker(name: "transactional-loop-poison")
        defer { broker.stop() }
        let count = 7
        let (loop, input, output, group) = try await Self.loopOverInput(broker: broker, count: count, deadLetterTopic: true)
        let deadLetters = try #require(loop.settings.deadLetterTopic)
        let handledOnce = Mutex<Set<String>>([])
        let running = Task {
            try await loop.run { batch, producer in
                let seen = handledOnce.withLock { seen in
                    for message in batch where message.value != Array("in-3".utf8) {
                        seen.insert(String(decoding: message.value ?? [], as: UTF8.self))
                    }
                    return seen
                }
                for message in batch {
                    let value = String(decoding: message.value ?? [], as: UTF8.self)
                    // The poison: its output is over the producer's message.max.bytes.
                    let size = value == "in-3" ? 1_200_000 : 10
                    try producer.enqueue(
                        KafkaOutgoingMessage(topic: output, key: nil, value: Array(value.utf8) + Array(repeating: 0x2E, count: size)))
                }
                return TransactionalLoop.BatchWork(afterCommit: {
                    // Every record but the poison (whose handling always throws) was handled.
                    if seen.count >= count - 1, loop.recordsDeadLettered >= 1 { loop.stop() }
                })
            }
        }
        defer {
            loop.stop()
            running.cancel()
        }
        try await waitWhileProgressing("the loop getting past the poison record") {
            () async throws -> ProgressCheck<[Int], Void> in
            loop.isStopping ? .done(()) : .waiting([loop.batchesCommitted, loop.recordsDeadLettered])
        }
        try await running.value

        #expect(loop.recordsDeadLettered == 1)
        let committed = try await Self.committedOffset(broker: broker, group: group, topic: input) ?? -1
        #expect(committed == Int64(count))
        let outputs = try await Self.values(broker: broker, topic: output)
        #expect(Set(outputs.map { String($0.prefix(4)) }) == Set((0..<count).filter { $0 != 3 }.map { "in-\($0)" }))
        let letters = try await Self.values(broker: broker, topic: deadLetters)
        #expect(letters.count == 1)
        let envelope = try JSONValue.parse(Array((letters.first ?? "").utf8))
        #expect(envelope["reason"] == .string("record_too_large"))
        #expect(envelope["source"]?["offset"] == .number("3"))
    }

    /// With `transactionalInput` every record is written in a transaction of its own, as a
    /// planner writes tasks: a commit marker follows each record, and the group consumer's
    /// position passes it, beyond the offset the loop committed.
    @Test(
        "records of noticed partitions are read beside the slow group consumer, handled once, and dropped when that consumer brings them",
        arguments: [false, true])
    func noticedRecordsAreReadDirectly(transactionalInput: Bool) async throws {
        let broker = try TestBroker(name: "transactional-loop-direct")
        defer { broker.stop() }
        let (plain, input, output, group) = try await Self.loopOverInput(broker: broker, count: 0, deadLetterTopic: false)
        // The embedded broker answers an idle fetch when its wait ends, and with a minimum size
        // no record here reaches, near the end of the whole wait (measured: 8.7 s of a 10 s wait,
        // against 3.7 s with the default minimum; the wait here is 3 s). So the group consumer
        // brings each record seconds late, and a direct read, a few milliseconds, is first
        // unless it stalls for seconds.
        var settings = plain.settings
        settings.consumer.fetchWaitMaxMs = 3_000
        settings.consumer.fetchMinBytes = 100_000_000
        settings.batchSize = 1
        settings.pollTimeout = .milliseconds(5)
        let notices = TaskNotices()
        var reader = KafkaConsumerConfiguration(bootstrapServers: broker.bootstrapServers)
        reader.fetchWaitMaxMs = 5
        settings.directReads = DirectReads.Settings(notices: notices, consumer: reader, readTimeout: .seconds(3))
        let loop = TransactionalLoop(settings: settings, logger: Self.logger, metrics: PipelineMetrics())
        let handled = Mutex<[String: Int]>([:])
        let running = Task {
            try await loop.run { batch, producer in
                handled.withLock { handled in
                    for message in batch { handled[String(decoding: message.value ?? [], as: UTF8.self), default: 0] += 1 }
                }
                for message in batch { try producer.enqueue(KafkaOutgoingMessage(topic: output, key: nil, value: message.value ?? [])) }
                return TransactionalLoop.BatchWork()
            }
        }
        defer {
            loop.stop()
            running.cancel()
        }
        var publisher = KafkaProducerConfiguration(bootstrapServers: broker.bootstrapServers)
        publisher.lingerMs = 0
        if transactionalInput {
            publisher.transactionalId = TestBroker.uniqueName("direct-writer")
            publisher.transactionTimeoutMs = 30_000
            publisher.messageTimeoutMs = 30_000
        }
        let producer = try KafkaProducer(configuration: publisher, logger: Self.logger)
        if transactionalInput { try await producer.initTransactions() }
        // The first record comes through the group consumer: the loop has then joined its group.
        let count = 5
        var latencies: [Duration] = []
        for number in 0..<count {
            if transactionalInput { try producer.beginTransaction() }
            try producer.enqueue(KafkaOutgoingMessage(topic: input, key: nil, value: Array("in-\(number)".utf8)))
            try await producer.flush()
            if transactionalInput { try await producer.commitTransaction() }
            let published = ContinuousClock.now
            if number > 0 { notices.post([KafkaTopicPartition(topic: input, partition: 0)]) }
            let deadline = published + .seconds(30)
            while handled.withLock({ $0["in-\(number)"] == nil }), ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(2))
            }
            latencies.append(ContinuousClock.now - published)
        }
        await producer.shutdown()
        // The group consumer brings every record read directly again, and the loop drops it.
        try await waitWhileProgressing("the group consumer to bring the records read directly") {
            () async throws -> ProgressCheck<Int, Void> in
            let again = loop.recordsBroughtAgain
            return again >= loop.recordsReadDirectly ? .done(()) : .waiting(again)
        }
        // A notice of records already handled reads from the committed offset and finds nothing.
        notices.post([KafkaTopicPartition(topic: input, partition: 0)])
        let stale = ContinuousClock.now + .seconds(5)
        while !notices.isEmpty, ContinuousClock.now < stale { try await Task.sleep(for: .milliseconds(10)) }
        try await Task.sleep(for: .seconds(1))
        loop.stop()
        try await running.value

        let counts = handled.withLock { $0 }
        #expect(counts == Dictionary(uniqueKeysWithValues: (0..<count).map { ("in-\($0)", 1) }), "handled: \(counts)")
        #expect(loop.recordsReadDirectly >= 1, "no record was read directly; publish to handled: \(latencies)")
        let committed = try await Self.committedOffset(broker: broker, group: group, topic: input) ?? -1
        if transactionalInput {
            // Past the last record, and past its marker where the broker gives markers offsets.
            #expect(committed >= Int64(count) && committed <= Int64(2 * count), "committed \(committed)")
        } else {
            #expect(committed == Int64(count))
        }
        #expect(try await Self.values(broker: broker, topic: output).sorted() == (0..<count).map { "in-\($0)" })
    }

    @Test(
        "failures are classified: the input's fault is permanent, the infrastructure's transient",
        arguments: [
            (KafkaError(code: .messageSizeTooLarge, message: "", operation: "produce") as any Error, true),
            (KafkaError(code: .transport, message: "", operation: "commit") as any Error, false),
            (KafkaError(code: .timedOut, message: "", operation: "send offsets", isFatal: true) as any Error, false),
            (RedisError(code: .io, message: "") as any Error, false),
            (HandlerFailure() as any Error, true),
        ])
    func classification(error: any Error, permanent: Bool) {
        if case .permanent = FailureKind.of(error) { #expect(permanent) } else { #expect(!permanent) }
    }

    /// Every value of partition 0 of `topic`, read committed.
    static func values(broker: TestBroker, topic: String) async throws -> [String] {
        var configuration = KafkaConsumerConfiguration(bootstrapServers: broker.bootstrapServers, groupId: TestBroker.uniqueName("reader"))
        configuration.isolationLevel = .readCommitted
        configuration.enableAutoCommit = false
        let reader = try KafkaConsumer(configuration: configuration, logger: logger)
        try reader.assign([KafkaTopicPartitionOffset(topic: topic, partition: 0, offset: 0)])
        var values: [String] = []
        // Read until two seconds pass without a record (the topics are small and complete).
        var quietPolls = 0
        while quietPolls < 10 {
            let batch = try await reader.pollBatch(maxMessages: 1_000, timeout: .milliseconds(200))
            quietPolls = batch.isEmpty ? quietPolls + 1 : 0
            values += batch.map { String(decoding: $0.value ?? [], as: UTF8.self) }
        }
        try await reader.close()
        return values
    }

    @Test(
        "a loop whose group assigns it nothing (its leader vanished) says so on the progress board until the group forms, then does its work"
    )
    func unassignedLoopReportsUntilGroupForms() async throws {
        let broker = try TestBroker(name: "loop-unassigned")
        defer { broker.stop() }
        let count = 4
        let (template, input, output, group) = try await Self.loopOverInput(broker: broker, count: count, deadLetterTopic: false)
        let board = ProgressBoard()
        var settings = template.settings
        settings.progress = board
        let loop = TransactionalLoop(settings: settings, logger: Self.logger, metrics: PipelineMetrics())

        // A member that led the group and then vanished without leaving (a crashed worker)
        // stays its leader until its long session runs out: until then nobody hands out
        // partitions, so the loop's consumer joins and waits.
        var vanishing = KafkaConsumerConfiguration(bootstrapServers: broker.bootstrapServers, groupId: group)
        vanishing.sessionTimeoutMs = 9_000
        vanishing.leaveGroupOnClose = false
        var crashed: KafkaConsumer! = try KafkaConsumer(configuration: vanishing, logger: Self.logger)
        try crashed.subscribe(topics: [input])
        try await waitUntilTrue("the first member was assigned the input partition") {
            _ = try await crashed.pollBatch(maxMessages: 10, timeout: .milliseconds(100))
            return try !crashed.assignment().isEmpty
        }
        try await crashed.close()
        crashed = nil

        let handled = Mutex<Set<String>>([])
        let running = Task {
            try await loop.run { batch, producer in
                for message in batch {
                    try producer.enqueue(KafkaOutgoingMessage(topic: output, key: nil, value: message.value ?? []))
                }
                let all = handled.withLock { handled in
                    handled.formUnion(batch.map { String(decoding: $0.value ?? [], as: UTF8.self) })
                    return handled.count == count
                }
                if all { loop.stop() }
                return TransactionalLoop.BatchWork()
            }
        }
        defer {
            loop.stop()
            running.cancel()
        }
        try await waitUntilTrue("the board reports the loop waiting for partitions") {
            board.stalled(longerThan: .seconds(2)).contains { $0.name == "test-loop" && $0.reason == .waitingForPartitions }
        }
        #expect(handled.withLock { $0.isEmpty }, "a loop without partitions handled records")

        // The vanished member's session runs out; the group forms around the loop, which
        // does its work, and the board no longer reports a wait.
        try await waitWhileProgressing("the loop handled every record") {
            () async throws -> ProgressCheck<Int, Void> in
            let done = handled.withLock { $0.count }
            return done == count ? .done(()) : .waiting(done)
        }
        #expect(board.stalled(longerThan: .zero).allSatisfy { $0.reason != .waitingForPartitions })
        try await running.value
    }

    /// An input topic holding `in-0` ... `in-<count-1>`, an output topic, and a loop (with its
    /// own dead-letter topic when asked) over the input in a group of its own.
    static func loopOverInput(broker: TestBroker, count: Int, deadLetterTopic: Bool) async throws
        -> (loop: TransactionalLoop, input: String, output: String, group: String)
    {
        let admin = try KafkaAdmin(configuration: KafkaAdminConfiguration(bootstrapServers: broker.bootstrapServers), logger: logger)
        let input = TestBroker.uniqueName("loop-input")
        let output = TestBroker.uniqueName("loop-output")
        let deadLetters = deadLetterTopic ? TestBroker.uniqueName("loop-dlq") : nil
        try await admin.createTopics(([input, output] + [deadLetters].compactMap { $0 }).map { KafkaTopicSpec(name: $0, partitions: 1) })

        var plain = KafkaProducerConfiguration(bootstrapServers: broker.bootstrapServers)
        plain.lingerMs = 1
        let publisher = try KafkaProducer(configuration: plain, logger: logger)
        for number in 0..<count {
            try publisher.enqueue(KafkaOutgoingMessage(topic: input, key: nil, value: Array("in-\(number)".utf8)))
        }
        try await publisher.flush()
        await publisher.shutdown()

        let group = TestBroker.uniqueName("loop-group")
        var consumer = KafkaConsumerConfiguration(bootstrapServers: broker.bootstrapServers, groupId: group)
        consumer.sessionTimeoutMs = TestBroker.sessionTimeoutMs
        consumer.heartbeatIntervalMs = 500
        consumer.leaveGroupOnClose = false
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
                gate: TransactionGate(), deadLetterTopic: deadLetters
            ),
            logger: logger, metrics: PipelineMetrics()
        )
        return (loop, input, output, group)
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
