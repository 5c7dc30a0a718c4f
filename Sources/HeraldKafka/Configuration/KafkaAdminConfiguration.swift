/// Settings of a `KafkaAdmin` client (topic creation and description).
public struct KafkaAdminConfiguration: Sendable {
    /// Comma-separated `host:port` list used to discover the cluster.
    public var bootstrapServers: String
    public var clientId: String = "herald-admin"
    /// Any further librdkafka property; these override the typed settings above.
    public var extra: [String: String] = [:]

    public init(bootstrapServers: String = "127.0.0.1:9092") {
        self.bootstrapServers = bootstrapServers
    }

    /// The librdkafka properties these settings stand for (the only translation point).
    public func librdkafkaProperties() -> [String: String] {
        var properties = [
            "bootstrap.servers": bootstrapServers,
            "client.id": clientId,
        ]
        properties.merge(extra) { _, override in override }
        return properties
    }
}
