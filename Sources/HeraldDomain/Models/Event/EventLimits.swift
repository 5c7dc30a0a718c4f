/// Limits applied when an event is decoded.
public struct EventLimits: Sendable, Hashable {
    /// Size of the whole event in bytes (Kafka's default message limit is 1 MiB).
    public var maxBytes: Int
    /// Number of properties.
    public var maxProperties: Int
    /// `collapseId` in UTF-8 bytes (APNs refuses collapse ids over 64 bytes).
    public var maxCollapseIdBytes: Int
    /// Limits for parsing the `tags` expression.
    public var tagExpression: TagExpressionLimits

    public init(maxBytes: Int = 1_048_576, maxProperties: Int = 1_000, maxCollapseIdBytes: Int = 64, tagExpression: TagExpressionLimits = .default) {
        self.maxBytes = maxBytes
        self.maxProperties = maxProperties
        self.maxCollapseIdBytes = maxCollapseIdBytes
        self.tagExpression = tagExpression
    }

    public static let `default` = EventLimits()
}
