import HeraldDomain
import HeraldKafka
import Logging

/// Creates the pipeline's topics if they are missing. Safe to run on every start: existing
/// topics are left as they are (their partition counts are reported, not changed).
public struct TopicProvisioner: Sendable {
    public var topics: HeraldTopics
    public var bootstrapServers: String
    public var extra: [String: String]
    private let logger: Logger

    public init(
        topics: HeraldTopics, bootstrapServers: String, extra: [String: String] = [:],
        logger: Logger = Logger(label: "herald.pipeline.topics")
    ) {
        self.topics = topics
        self.bootstrapServers = bootstrapServers
        self.extra = extra
        self.logger = logger
    }

    /// The topic specifications, in data-flow order.
    public var specifications: [KafkaTopicSpec] {
        topics.all.map { topic in
            var configs: [String: String] = [:]
            configs["max.message.bytes"] = String(RecordSizes.topicMaxMessageBytes)
            // Dead letters are kept long enough for someone to look at them after a weekend.
            if topic.name == topics.eventsDeadLetters { configs["retention.ms"] = String(14 * 24 * 3_600_000) }
            // The latest record of each schedule is its state; tombstones go after a day.
            if topic.name == topics.scheduled {
                configs["cleanup.policy"] = "compact"
                configs["delete.retention.ms"] = String(24 * 3_600_000)
            }
            // One final receipt per delivery id: compaction keeps each delivery's outcome.
            if topic.name == topics.receipts { configs["cleanup.policy"] = "compact" }
            // The newest record of each hub is the hub; one partition keeps their order.
            if topic.name == topics.hubs { configs["cleanup.policy"] = "compact" }
            // One record per device and action of an alert: each counts once.
            if topic.name == topics.engagements { configs["cleanup.policy"] = "compact" }
            return KafkaTopicSpec(
                name: topic.name, partitions: Int(topic.partitions),
                replicationFactor: Int(topics.replicationFactor), configs: configs
            )
        }
    }

    /// Creates every missing topic; returns name -> partition count as the cluster reports it.
    @discardableResult
    public func provision() async throws -> [String: Int] {
        var configuration = KafkaAdminConfiguration(bootstrapServers: bootstrapServers)
        configuration.extra = extra
        let admin = try KafkaAdmin(configuration: configuration, logger: logger)
        try await admin.createTopics(specifications, ignoreExisting: true)
        let existing = try await admin.listTopics()
        var result: [String: Int] = [:]
        for topic in topics.all {
            let count = existing[topic.name] ?? 0
            result[topic.name] = count
            if count != Int(topic.partitions) {
                logger.notice(
                    "topic exists with another partition count; keeping it",
                    metadata: ["topic": "\(topic.name)", "partitions": "\(count)", "configured": "\(topic.partitions)"]
                )
            }
        }
        return result
    }
}
