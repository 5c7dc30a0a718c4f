import CRdKafka
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

/// Records still owned by librdkafka, handed to the closure of `KafkaConsumer.pollBorrowing`.
/// Nothing is copied; every pointer is valid only until that closure returns.
public struct KafkaBorrowedBatch: RandomAccessCollection {
    let messages: [UnsafeMutablePointer<rd_kafka_message_t>]

    public var startIndex: Int { messages.startIndex }
    public var endIndex: Int { messages.endIndex }

    public subscript(position: Int) -> KafkaBorrowedMessage {
        KafkaBorrowedMessage(messages[position])
    }
}

/// One record of a `KafkaBorrowedBatch`: its position and its bytes in librdkafka's buffers.
public struct KafkaBorrowedMessage {
    public let partition: Int32
    public let offset: Int64
    public let key: UnsafeRawBufferPointer?
    /// Nil for a tombstone.
    public let value: UnsafeRawBufferPointer?

    init(_ message: UnsafeMutablePointer<rd_kafka_message_t>) {
        let record = message.pointee
        partition = record.partition
        offset = record.offset
        key = record.key.map { UnsafeRawBufferPointer(start: $0, count: record.key_len) }
        value = record.payload.map { UnsafeRawBufferPointer(start: $0, count: record.len) }
    }
}
