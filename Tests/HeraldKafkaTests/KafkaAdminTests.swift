import HeraldKafka
import HeraldTestSupport
import Testing

@Suite("Topic administration", .heavy)
struct KafkaAdminTests {
    let broker: TestBroker

    init() throws { broker = try TestBroker(name: "kafka-admin") }

    @Test("a compacted topic is created with its partitions and reads back cleanup.policy=compact")
    func createCompactedTopic() async throws {
        let admin = try broker.admin()
        let name = TestBroker.uniqueName("registrations")
        let plain = TestBroker.uniqueName("events")
        try await admin.createTopics([
            KafkaTopicSpec(name: name, partitions: 3, configs: ["cleanup.policy": "compact"]),
            KafkaTopicSpec(name: plain, partitions: 2),
        ])

        let configs = try await admin.describeConfigs(topic: name)
        #expect(configs["cleanup.policy"] == "compact")

        let topics = try await admin.listTopics()
        #expect(topics[name] == 3)
        #expect(topics[plain] == 2)

        let description = try await admin.describeTopic(name)
        #expect(description.partitions.map(\.id) == [0, 1, 2])
    }

    @Test("creating an existing topic fails unless asked to tolerate it")
    func existingTopic() async throws {
        let admin = try broker.admin()
        let name = TestBroker.uniqueName("existing")
        try await admin.createTopics([KafkaTopicSpec(name: name, partitions: 1)])
        try await admin.createTopics([KafkaTopicSpec(name: name, partitions: 1)], ignoreExisting: true)
        let error = await #expect(throws: KafkaError.self) {
            try await admin.createTopics([KafkaTopicSpec(name: name, partitions: 1)])
        }
        #expect(error?.code == .topicAlreadyExists)
        #expect(error?.topic == name)
    }

    @Test("describing a topic that does not exist names it in the error")
    func describeMissingTopic() async throws {
        let name = TestBroker.uniqueName("absent")
        let error = await #expect(throws: KafkaError.self) { try await broker.admin().describeTopic(name) }
        #expect(error?.description.contains(name) == true)
    }
}
