/// How many replicas must acknowledge a produced record (`acks`).
public struct KafkaAcks: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// Every in-sync replica; required by the idempotent and transactional producer.
    public static let all = Self(rawValue: "all")
    public static let leader = Self(rawValue: "1")
    public static let none = Self(rawValue: "0")
}
