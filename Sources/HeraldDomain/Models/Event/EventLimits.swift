/// Limits applied when an event is decoded.
public struct EventLimits: Sendable, Hashable {
    /// Size of the whole event in bytes; its task record is about twice that, which keeps it
    /// under every producer's and topic's record limit (``RecordSizes``).
    public var maxBytes: Int
    /// Number of properties.
    public var maxProperties: Int
    /// `collapseId` in UTF-8 bytes (APNs refuses collapse ids over 64 bytes).
    public var maxCollapseIdBytes: Int
    /// Limits for parsing the `tags` expression.
    public var tagExpression: TagExpressionLimits
    /// A native payload over its platform's limit could reach no device: refused at the door.
    public var payloadLimits: PayloadLimits

    public init(
        maxBytes: Int = RecordSizes.maxEventBytes, maxProperties: Int = 1_000, maxCollapseIdBytes: Int = 64,
        tagExpression: TagExpressionLimits = .default, payloadLimits: PayloadLimits = .default
    ) {
        self.payloadLimits = payloadLimits
        self.maxBytes = maxBytes
        self.maxProperties = maxProperties
        self.maxCollapseIdBytes = maxCollapseIdBytes
        self.tagExpression = tagExpression
    }

    public static let `default` = EventLimits()

    /// For copies of events that were validated at the door with the deployment's limits
    /// (which may be wider than the defaults): no size ceilings, only the nesting depth that
    /// keeps the expression parser's recursion bounded.
    public static let trusted = EventLimits(
        maxBytes: .max, maxProperties: .max, maxCollapseIdBytes: .max,
        tagExpression: TagExpressionLimits(maxLength: .max, maxTags: .max),
        payloadLimits: PayloadLimits(apns: .max, fcm: .max, wns: .max, webpush: .max)
    )
}
