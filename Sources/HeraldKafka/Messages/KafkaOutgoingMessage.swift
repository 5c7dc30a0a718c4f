import struct Foundation.Date

/// A record to produce. Bytes are copied by librdkafka when the record is enqueued, so the
/// arrays may be reused or released as soon as `send`/`enqueue` returns.
public struct KafkaOutgoingMessage: Sendable {
    public var topic: String
    /// `nil` lets librdkafka's partitioner pick one from the key (consistent-random).
    public var partition: Int32?
    public var key: [UInt8]?
    /// `nil` is a tombstone (deletes the key on a compacted topic).
    public var value: [UInt8]?
    public var headers: [KafkaHeader]
    /// `nil` lets librdkafka stamp the record with the current time.
    public var timestamp: Date?

    public init(
        topic: String,
        partition: Int32? = nil,
        key: [UInt8]? = nil,
        value: [UInt8]?,
        headers: [KafkaHeader] = [],
        timestamp: Date? = nil
    ) {
        self.topic = topic
        self.partition = partition
        self.key = key
        self.value = value
        self.headers = headers
        self.timestamp = timestamp
    }

    /// Convenience for text keys and values (UTF-8).
    public init(topic: String, partition: Int32? = nil, key: String?, value: String?, headers: [(String, [UInt8])] = []) {
        self.init(
            topic: topic,
            partition: partition,
            key: key.map { Array($0.utf8) },
            value: value.map { Array($0.utf8) },
            headers: headers.map { KafkaHeader(key: $0.0, value: $0.1) }
        )
    }
}

/// One record header. Kafka allows repeated keys, so headers are a list, not a dictionary.
public struct KafkaHeader: Hashable, Sendable {
    public var key: String
    /// `nil` is a header with a null value, distinct from an empty one.
    public var value: [UInt8]?

    public init(key: String, value: [UInt8]?) {
        self.key = key
        self.value = value
    }

    public init(key: String, value: String) {
        self.init(key: key, value: Array(value.utf8))
    }
}

/// Where the broker stored a produced record.
public struct KafkaDeliveryReport: Sendable, Hashable {
    public var topic: String
    public var partition: Int32
    public var offset: Int64

    public init(topic: String, partition: Int32, offset: Int64) {
        self.topic = topic
        self.partition = partition
        self.offset = offset
    }
}
