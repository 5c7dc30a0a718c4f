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
