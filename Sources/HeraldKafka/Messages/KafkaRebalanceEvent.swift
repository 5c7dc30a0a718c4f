/// A change of a consumer's partitions, delivered before librdkafka applies a revocation so
/// the owner can drop in-flight state of partitions it is about to lose.
public enum KafkaRebalanceEvent: Sendable, Hashable {
    /// These partitions are now this member's (the full set for eager protocols, the added
    /// ones for cooperative-sticky).
    case assigned([KafkaTopicPartition])
    /// These partitions are being taken away in an orderly rebalance; offsets of finished
    /// work can still be committed.
    case revoked([KafkaTopicPartition])
    /// These partitions were lost (session timed out, fenced): another member may already
    /// own them, so commits for them will fail and in-flight work should be dropped.
    case lost([KafkaTopicPartition])

    public var partitions: [KafkaTopicPartition] {
        switch self {
        case .assigned(let partitions), .revoked(let partitions), .lost(let partitions): partitions
        }
    }
}
