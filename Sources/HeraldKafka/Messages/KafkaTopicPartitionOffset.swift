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
