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
