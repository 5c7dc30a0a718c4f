import Dispatch
import Logging

/// Creates, deletes and describes topics.
public final class KafkaAdmin: Sendable {
    public let configuration: KafkaAdminConfiguration
    private let client: RDKafkaClient
    private let pollThread: RDKafkaPollThread
    private let blockingQueue: DispatchQueue

    public init(configuration: KafkaAdminConfiguration, logger: Logger = Logger(label: "herald.kafka.admin")) throws {
        self.configuration = configuration
        // Admin requests need a handle of either type; a producer handle joins no group.
        client = try RDKafkaClient(
            kind: .producer, properties: configuration.librdkafkaProperties(), callbacks: RDKafkaCallbacks(logger: logger))
        pollThread = RDKafkaPollThread(client: client, name: "herald.kafka.admin.poll")
        blockingQueue = blockingCallQueue("herald.kafka.admin.blocking")
    }

    deinit { pollThread.stop() }

    /// Creates the topics; with `ignoreExisting`, a topic that already exists is not an error
    /// (its partitions and configs are left as they are).
    public func createTopics(_ topics: [KafkaTopicSpec], ignoreExisting: Bool = false, timeout: Duration = .seconds(30)) async throws {
        let client = client
        try await runBlocking(on: blockingQueue) {
            try client.createTopics(topics, ignoreExisting: ignoreExisting, timeoutMs: timeout.rdKafkaMilliseconds)
        }
    }

    public func deleteTopics(_ names: [String], ignoreMissing: Bool = false, timeout: Duration = .seconds(30)) async throws {
        let client = client
        try await runBlocking(on: blockingQueue) {
            try client.deleteTopics(names, ignoreMissing: ignoreMissing, timeoutMs: timeout.rdKafkaMilliseconds)
        }
    }

    /// Topic name -> partition count, for every topic in the cluster.
    public func listTopics(timeout: Duration = .seconds(10)) async throws -> [String: Int] {
        let topics = try await describeAllTopics(timeout: timeout)
        return Dictionary(topics.map { ($0.name, $0.partitionCount) }, uniquingKeysWith: { first, _ in first })
    }

    /// Partitions, leaders and replicas of one topic.
    public func describeTopic(_ name: String, timeout: Duration = .seconds(10)) async throws -> KafkaTopicDescription {
        guard let topic = try await describeAllTopics(timeout: timeout).first(where: { $0.name == name }) else {
            throw KafkaError(
                code: .unknownTopicOrPartition, message: "no such topic in the cluster metadata", operation: "describe topic", topic: name)
        }
        return topic
    }

    /// The topic's configs as the broker reports them, for example `cleanup.policy`.
    public func describeConfigs(topic: String, timeout: Duration = .seconds(10)) async throws -> [String: String] {
        let client = client
        return try await runBlocking(on: blockingQueue) {
            try client.describeTopicConfigs(topic, timeoutMs: timeout.rdKafkaMilliseconds)
        }
    }

    private func describeAllTopics(timeout: Duration) async throws -> [KafkaTopicDescription] {
        let client = client
        return try await runBlocking(on: blockingQueue) { try client.describeAllTopics(timeoutMs: timeout.rdKafkaMilliseconds) }
    }
}

/// A topic to create.
public struct KafkaTopicSpec: Sendable, Hashable {
    public var name: String
    public var partitions: Int
    public var replicationFactor: Int
    /// Topic-level configs, for example `["cleanup.policy": "compact"]`.
    public var configs: [String: String]

    public init(name: String, partitions: Int, replicationFactor: Int = 1, configs: [String: String] = [:]) {
        self.name = name
        self.partitions = partitions
        self.replicationFactor = replicationFactor
        self.configs = configs
    }
}

/// A topic as the cluster metadata describes it.
public struct KafkaTopicDescription: Sendable, Hashable {
    public struct Partition: Sendable, Hashable {
        public var id: Int32
        /// Broker id of the leader, -1 when there is none.
        public var leader: Int32
        public var replicas: [Int32]
        public var inSyncReplicas: [Int32]
    }

    public var name: String
    public var partitions: [Partition]

    public var partitionCount: Int { partitions.count }
}
