/// Whether a consumer sees records of transactions that are open or aborted (`isolation.level`).
public struct KafkaIsolationLevel: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// Only records of committed transactions (and non-transactional records).
    public static let readCommitted = Self(rawValue: "read_committed")
    public static let readUncommitted = Self(rawValue: "read_uncommitted")
}
