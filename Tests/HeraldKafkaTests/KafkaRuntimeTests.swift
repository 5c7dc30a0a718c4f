import HeraldKafka
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
