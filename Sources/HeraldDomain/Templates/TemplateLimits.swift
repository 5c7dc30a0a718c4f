/// Bounds that keep compiling a hostile or mistaken template cheap and its output bounded.
///
/// Templates arrive from devices at registration time, so every dimension the compiler walks
/// is capped; the defaults are generous for real notification payloads.
public struct TemplateLimits: Sendable, Hashable {
    /// Largest accepted body, in UTF-8 bytes. Push services cap payloads well below this.
    public var maxBodyBytes: Int = 65_536
    /// Longest property name inside `$(...)`.
    public var maxPropertyNameLength: Int = 120
    /// Largest `n` in `$(p, n)` and `.(p, n)`.
    public var maxClipLength: Int = 65_536
    /// Most expressions (including every term of a composite) in one body.
    public var maxExpressions: Int = 1_024
    /// Deepest nesting of JSON objects/arrays or XML elements.
    public var maxNestingDepth: Int = 64

    public init(
        maxBodyBytes: Int = 65_536,
        maxPropertyNameLength: Int = 120,
        maxClipLength: Int = 65_536,
        maxExpressions: Int = 1_024,
        maxNestingDepth: Int = 64
    ) {
        self.maxBodyBytes = maxBodyBytes
        self.maxPropertyNameLength = maxPropertyNameLength
        self.maxClipLength = maxClipLength
        self.maxExpressions = maxExpressions
        self.maxNestingDepth = maxNestingDepth
    }

    public static let `default` = TemplateLimits()
}
