/// How a consumer group spreads partitions over its members (`partition.assignment.strategy`).
public struct KafkaPartitionAssignmentStrategy: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// Eager protocol: every rebalance revokes all partitions, then assigns afresh.
    public static let range = Self(rawValue: "range")
    public static let roundRobin = Self(rawValue: "roundrobin")
    /// librdkafka's default list (eager).
    public static let rangeThenRoundRobin = Self(rawValue: "range,roundrobin")
    /// Incremental protocol: only the partitions that move are revoked, the rest keep flowing.
    public static let cooperativeSticky = Self(rawValue: "cooperative-sticky")
}
