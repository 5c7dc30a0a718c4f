/// Where a consumer group starts on a partition that has no committed offset (`auto.offset.reset`).
public struct KafkaAutoOffsetReset: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    public static let earliest = Self(rawValue: "earliest")
    public static let latest = Self(rawValue: "latest")
    /// Fail the partition with an error instead of guessing.
    public static let error = Self(rawValue: "error")
}
