import struct Foundation.Date

/// A consumed record. Its bytes were copied out of librdkafka, so it outlives the poll.
public struct KafkaMessage: Sendable, Hashable {
    public var topic: String
    public var partition: Int32
    public var offset: Int64
    public var key: [UInt8]?
    /// `nil` for a tombstone.
    public var value: [UInt8]?
    public var headers: [KafkaHeader]
    public var timestamp: Date?

    public init(
        topic: String,
        partition: Int32,
        offset: Int64,
        key: [UInt8]?,
        value: [UInt8]?,
        headers: [KafkaHeader] = [],
        timestamp: Date? = nil
    ) {
        self.topic = topic
        self.partition = partition
        self.offset = offset
        self.key = key
        self.value = value
        self.headers = headers
        self.timestamp = timestamp
    }

    public var topicPartition: KafkaTopicPartition { KafkaTopicPartition(topic: topic, partition: partition) }

    /// The offset to commit once this record is done: Kafka commits the *next* offset to read.
    public var nextOffset: KafkaTopicPartitionOffset {
        KafkaTopicPartitionOffset(topic: topic, partition: partition, offset: offset + 1)
    }

    /// The first header with `key`, if any.
    public func header(_ key: String) -> [UInt8]? {
        headers.first { $0.key == key }?.value ?? nil
    }
}
