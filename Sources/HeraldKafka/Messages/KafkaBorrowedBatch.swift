import CRdKafka

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
