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
