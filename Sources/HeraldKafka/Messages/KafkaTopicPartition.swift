/// One partition of one topic.
public struct KafkaTopicPartition: Hashable, Sendable, Comparable, CustomStringConvertible {
    public var topic: String
    public var partition: Int32

    public init(topic: String, partition: Int32) {
        self.topic = topic
        self.partition = partition
    }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.topic, lhs.partition) < (rhs.topic, rhs.partition)
    }

    public var description: String { "\(topic)[\(partition)]" }
}

/// An offset in one partition. For commits and stores it is the *next* record to read.
public struct KafkaTopicPartitionOffset: Hashable, Sendable, CustomStringConvertible {
    public var topic: String
    public var partition: Int32
    public var offset: Int64

    public init(topic: String, partition: Int32, offset: Int64) {
        self.topic = topic
        self.partition = partition
        self.offset = offset
    }

    public var topicPartition: KafkaTopicPartition { KafkaTopicPartition(topic: topic, partition: partition) }

    /// False for librdkafka's logical offsets such as `invalid` (nothing committed yet).
    public var isValid: Bool { offset >= 0 }

    public var description: String { "\(topic)[\(partition)]@\(offset)" }

    /// librdkafka's logical offsets.
    public static let beginning: Int64 = -2
    public static let end: Int64 = -1
    public static let stored: Int64 = -1000
    /// "No offset": for example `committed` on a partition the group never committed.
    public static let invalid: Int64 = -1001
}

/// Low and high watermarks of a partition: the first offset still stored and the offset the
/// next produced record will get.
public struct KafkaWatermarks: Sendable, Hashable {
    public var low: Int64
    public var high: Int64

    public init(low: Int64, high: Int64) {
        self.low = low
        self.high = high
    }
}

/// How far a consumer group is behind on one partition.
public struct KafkaPartitionLag: Sendable, Hashable {
    public var partition: KafkaTopicPartition
    /// The group's committed offset, or `nil` when it never committed on this partition.
    public var committed: Int64?
    public var watermarks: KafkaWatermarks
    /// This consumer's position (the next offset it fetches), when it owns the partition.
    public var position: Int64?

    public init(partition: KafkaTopicPartition, committed: Int64?, watermarks: KafkaWatermarks, position: Int64? = nil) {
        self.partition = partition
        self.committed = committed
        self.watermarks = watermarks
        self.position = position
    }

    /// Records not yet committed; without a commit, everything still stored counts.
    /// Transactional commit markers count too: they take offsets after the last record.
    public var lag: Int64 {
        max(0, watermarks.high - (committed ?? watermarks.low))
    }

    /// `lag` for an owner that holds nothing uncommitted: what lies between the committed
    /// offset and its position was all committed or is markers, so only what it has not read
    /// yet is behind (0 when it read to the end).
    public var lagWhenIdle: Int64 {
        guard let position, position >= 0 else { return lag }
        return min(lag, max(0, watermarks.high - position))
    }
}

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

/// A consumer's group identity (group, generation, member) as librdkafka serialises it, so it
/// can cross threads and be handed to `KafkaProducer.sendOffsetsToTransaction`.
public struct KafkaConsumerGroupMetadata: Sendable, Hashable {
    /// librdkafka's opaque serialisation (`rd_kafka_consumer_group_metadata_write`).
    public var serialized: [UInt8]

    public init(serialized: [UInt8]) { self.serialized = serialized }
}
