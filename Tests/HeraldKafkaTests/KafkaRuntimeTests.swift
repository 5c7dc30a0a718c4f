import Dispatch
import Foundation
@testable import HeraldKafka
import HeraldTestSupport
import Testing

@Suite("librdkafka runtime and configuration")
struct KafkaRuntimeTests {
    @Test("the loaded librdkafka is at least 2.2 (2.0.x cannot talk to Tansu)")
    func runtimeVersion() {
        #expect(KafkaRuntime.version >= KafkaRuntime.minimumSupportedVersion)
        #expect(KafkaRuntime.version >= KafkaRuntimeVersion(major: 2, minor: 2, patch: 0))
        #expect(KafkaRuntime.versionString.hasPrefix("\(KafkaRuntime.version.major).\(KafkaRuntime.version.minor)."))
    }

    @Test("producer defaults are safe and transactional ids imply idempotence")
    func producerProperties() {
        var configuration = KafkaProducerConfiguration(bootstrapServers: "b:9092")
        var properties = configuration.librdkafkaProperties()
        #expect(properties["bootstrap.servers"] == "b:9092")
        #expect(properties["enable.idempotence"] == "true")
        #expect(properties["acks"] == "all")
        #expect(properties["transactional.id"] == nil)

        configuration.enableIdempotence = false
        configuration.transactionalId = "planner-0"
        configuration.compression = .lz4
        configuration.extra = ["linger.ms": "20", "debug": "msg"]
        properties = configuration.librdkafkaProperties()
        #expect(properties["enable.idempotence"] == "true")
        #expect(properties["transactional.id"] == "planner-0")
        #expect(properties["compression.type"] == "lz4")
        #expect(properties["linger.ms"] == "20", "extra overrides typed settings")
        #expect(properties["debug"] == "msg")
    }

    @Test("consumer defaults never commit behind the caller's back")
    func consumerProperties() {
        let properties = KafkaConsumerConfiguration(groupId: "g").librdkafkaProperties()
        #expect(properties["group.id"] == "g")
        #expect(properties["enable.auto.commit"] == "false")
        #expect(properties["enable.auto.offset.store"] == "false")
        #expect(properties["isolation.level"] == "read_committed")
        #expect(KafkaConsumerConfiguration().librdkafkaProperties()["group.id"] == KafkaConsumerConfiguration.assignOnlyGroupId)
    }

    @Test("an unknown librdkafka property is rejected with its name")
    func invalidProperty() {
        var configuration = KafkaProducerConfiguration()
        configuration.extra["no.such.property"] = "1"
        let error = #expect(throws: KafkaError.self) { try KafkaProducer(configuration: configuration) }
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.message.contains("no.such.property") == true)
    }

    @Test("an error description says what failed, where, and what to do")
    func errorDescription() {
        let error = KafkaError(code: .queueFull, message: "Local: Queue full", operation: "produce", topic: "herald.tasks")
        #expect(error.isRetriable)
        #expect(!error.isFatal)
        #expect(error.description.contains("produce failed for topic 'herald.tasks'"))
        #expect(error.description.contains("_QUEUE_FULL"))
        #expect(KafkaError(code: .fatal, message: "fenced", operation: "commit transaction").isFatal)
    }
}

/// `statistics.interval.ms` (set through the Kafka config file's properties) makes a client
/// log librdkafka's statistics document, which operators and the bench read.
@Suite("librdkafka statistics")
struct KafkaStatisticsTests {
    @Test("a producer with statistics.interval.ms logs librdkafka's statistics as one JSON document")
    func producerLogsStatistics() async throws {
        let capture = StatisticsCapture()
        let logger = capture.logger()
        // No broker is needed: the statistics timer runs whether or not one answers.
        var configuration = KafkaProducerConfiguration(bootstrapServers: "127.0.0.1:1")
        configuration.extra = ["statistics.interval.ms": "100"]
        let producer = try KafkaProducer(configuration: configuration, logger: logger)
        let deadline = ContinuousClock.now.advanced(by: .seconds(10))
        while capture.captured.isEmpty, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        await producer.shutdown(flushTimeout: .milliseconds(100))
        let document = try #require(capture.captured.first, "no statistics logged within 10 s")
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(document.utf8)) as? [String: Any])
        #expect(parsed["type"] as? String == "producer")
        #expect(parsed["brokers"] is [String: Any])
        #expect(parsed["txmsgs"] is NSNumber)
    }

    @Test("without statistics.interval.ms nothing is logged")
    func noStatisticsByDefault() async throws {
        let capture = StatisticsCapture()
        let logger = capture.logger()
        let producer = try KafkaProducer(configuration: KafkaProducerConfiguration(bootstrapServers: "127.0.0.1:1"), logger: logger)
        try await Task.sleep(for: .milliseconds(300))
        await producer.shutdown(flushTimeout: .milliseconds(100))
        #expect(capture.captured.isEmpty)
    }
}

@Suite("Blocking librdkafka calls")
struct BlockingCallQueueTests {
    /// Each client's blocking calls (a commit that waits for a slow broker) must not hold up
    /// other clients'. On Linux, concurrent dispatch queues share one thread per CPU and get
    /// more only from a monitor that runs about once a second, so with more blocked calls than
    /// CPUs the last ones start seconds late; the queues of `blockingCallQueue` must start
    /// them all at once. Every call here waits until all of them are running.
    @Test("more blocked calls than CPUs all run at once, on separate clients' queues")
    func blockedCallsDoNotWaitForThreads() async throws {
        let calls = ProcessInfo.processInfo.activeProcessorCount + 3
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let finished = DispatchGroup()
        for index in 0..<calls {
            finished.enter()
            blockingCallQueue("test.blocking.\(index)").async {
                started.signal()
                release.wait()  // blocked, like a commit waiting for the broker
                finished.leave()
            }
        }
        // Concurrent queues would start the last call 2 s or more after the first.
        let deadline = DispatchTime.now() + .milliseconds(1_500)
        var running = 0
        while running < calls, started.wait(timeout: deadline) == .success { running += 1 }
        for _ in 0..<calls { release.signal() }
        finished.wait()
        #expect(running == calls, "only \(running) of \(calls) blocked calls were running within 1.5 s")
    }
}
