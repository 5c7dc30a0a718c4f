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
