import HeraldDomain
import HeraldKafka
import Logging

/// The Kafka side of the registry: writes changes to the compacted `herald.registrations`
/// topic (see `RegistryChange+Kafka` for the record shape) and waits for the broker's
/// acknowledgement, so a change is reported done only once Kafka has it.
///
/// The producer must be idempotent with `acks=all` (`producerConfiguration` gives such
/// settings): a retried send can then neither duplicate nor reorder records of one id.
public final class RegistrationLog: Sendable {
    public let topic: String
    public let producer: KafkaProducer

    public init(producer: KafkaProducer, topic: String) {
        precondition(
            producer.configuration.enableIdempotence && producer.configuration.acks == .all,
            "the registration log needs an idempotent producer with acks=all"
        )
        self.producer = producer
        self.topic = topic
    }

    /// Producer settings for the log: idempotent, `acks=all`, no linger (a registration
    /// write is one record a caller is waiting for).
    public static func producerConfiguration(bootstrapServers: String) -> KafkaProducerConfiguration {
        var configuration = KafkaProducerConfiguration(bootstrapServers: bootstrapServers)
        configuration.clientId = "herald-registry"
        configuration.enableIdempotence = true
        configuration.acks = .all
        configuration.lingerMs = 0
        return configuration
    }

    /// Writes one change and returns once the broker acknowledged it.
    @discardableResult
    public func write(_ change: RegistryChange, hub: HubName = .default) async throws -> KafkaDeliveryReport {
        try await producer.send(change.outgoingMessage(topic: topic, hub: hub))
    }

    /// Writes changes concurrently and returns once every one is acknowledged; throws the
    /// first failure (the others may still have landed, which the version checks tolerate).
    public func write(_ changes: [RegistryChange], hub: HubName = .default) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for change in changes {
                group.addTask { _ = try await self.write(change, hub: hub) }
            }
            try await group.waitForAll()
        }
    }

    /// The topic as the registry wants it: compacted, so the newest record of every id (and
    /// tombstones, for `delete.retention.ms`) is kept forever and a reindex can replay it.
    public static func topicSpec(_ configuration: RegistryConfiguration) -> KafkaTopicSpec {
        KafkaTopicSpec(
            name: configuration.registrationsTopic,
            partitions: configuration.topicPartitions,
            replicationFactor: configuration.topicReplicationFactor,
            configs: ["cleanup.policy": "compact", "max.message.bytes": String(RecordSizes.topicMaxMessageBytes)]
        )
    }

    /// Creates the topic unless it exists (partitions and replication from `configuration`,
    /// `cleanup.policy=compact`).
    public static func createTopic(admin: KafkaAdmin, configuration: RegistryConfiguration) async throws {
        try await admin.createTopics([topicSpec(configuration)], ignoreExisting: true)
    }
}
