/// How far a consumer group is behind on one partition.
public struct KafkaPartitionLag: Sendable, Hashable {
    public var partition: KafkaTopicPartition
    /// The group's committed offset, or `nil` when it never committed on this partition.
    public var committed: Int64?
    public var watermarks: KafkaWatermarks

    public init(partition: KafkaTopicPartition, committed: Int64?, watermarks: KafkaWatermarks) {
        self.partition = partition
        self.committed = committed
        self.watermarks = watermarks
    }

    /// Records not yet committed; without a commit, everything still stored counts.
    public var lag: Int64 {
        max(0, watermarks.high - (committed ?? watermarks.low))
    }
}
