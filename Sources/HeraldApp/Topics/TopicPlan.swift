import HeraldKafka
import HeraldPipeline
import HeraldRegistry
import HeraldStreams

/// Every Herald topic with the recommended settings: the pipeline's topics from
/// `TopicProvisioner`, retention for deliveries and status, and the compacted registrations
/// topic (the system of record).
public struct TopicPlan: Sendable {
    public let settings: HeraldSettings

    public init(settings: HeraldSettings) {
        self.settings = settings
    }

    public func specifications() throws -> [KafkaTopicSpec] {
        let topics = try settings.topics
        let retention = String(try settings.deliveryRetentionHours() * 3_600_000)
        var specs = TopicProvisioner(topics: topics, bootstrapServers: settings[.kafkaBrokers]).specifications
        for index in specs.indices where specs[index].name == topics.deliveries {
            specs[index].configs["retention.ms"] = retention
        }
        for index in specs.indices where specs[index].name == topics.status {
            // The newest status per event is what readers need; old ones are also aged out.
            specs[index].configs["cleanup.policy"] = "compact,delete"
            specs[index].configs["retention.ms"] = retention
            // An event in flight keeps all its progress records (a rebuild of Redis needs them).
            specs[index].configs["min.compaction.lag.ms"] = String(24 * 3_600_000)
        }
        let registry = try settings.registryConfiguration()
        specs.append(
            KafkaTopicSpec(
                name: registry.registrationsTopic, partitions: registry.topicPartitions,
                replicationFactor: registry.topicReplicationFactor,
                configs: [
                    "cleanup.policy": "compact",
                    // Tombstones stay a week so a reindex still learns of recent deletes (410 Gone).
                    "delete.retention.ms": String(7 * 24 * 3_600_000),
                ]
            ))
        return specs
    }

    /// Creates the missing topics; returns what the cluster reports for each.
    public func create(admin: KafkaAdmin) async throws -> [(spec: KafkaTopicSpec, partitions: Int)] {
        let specs = try specifications()
        try await admin.createTopics(specs, ignoreExisting: true)
        let existing = try await admin.listTopics()
        return specs.map { ($0, existing[$0.name] ?? 0) }
    }
}
