/// Ceilings the parser enforces, so that a hostile or mistaken expression cannot exhaust the
/// stack, the planner or Redis.
///
/// The defaults are deliberately generous (Herald has no 6/20-tag ceiling). `.azure` adds
/// Azure Notification Hubs' rule for users who need expressions that Azure would also accept.
public struct TagExpressionLimits: Sendable, Hashable {
    /// Azure's ceiling for expressions that only join tags with `||`.
    public static let azureMaxTagsWhenOrOnly = 20
    /// Azure's ceiling for every other expression.
    public static let azureMaxTagsOtherwise = 6

    /// Longest expression, in UTF-8 bytes (the same as characters for every valid expression).
    public var maxLength: Int
    /// Deepest nesting of '(' and '!' (each counts one level), which bounds recursion.
    public var maxDepth: Int
    /// Most tag occurrences in one expression (`a || a` counts two).
    public var maxTags: Int
    /// Longest single tag, in characters.
    public var maxTagLength: Int
    /// Also enforce Azure's rule: at most 20 tags when the expression is OR-only, else 6.
    public var azureCompatible: Bool

    public init(
        maxLength: Int = 16_384,
        maxDepth: Int = 64,
        maxTags: Int = 1_000,
        maxTagLength: Int = TagRules.maxLength,
        azureCompatible: Bool = false
    ) {
        self.maxLength = maxLength
        self.maxDepth = maxDepth
        self.maxTags = maxTags
        self.maxTagLength = maxTagLength
        self.azureCompatible = azureCompatible
    }

    /// 16 KiB, depth 64, 1,000 tags, 120 characters per tag.
    public static let `default` = TagExpressionLimits()

    /// The default ceilings plus Azure's 20-if-OR-only / 6-otherwise tag rule.
    public static let azure = TagExpressionLimits(maxTags: azureMaxTagsWhenOrOnly, azureCompatible: true)

    /// The tag-count ceiling that applies while parsing, before it is known whether the
    /// expression is OR-only.
    var tagCeiling: Int {
        azureCompatible ? min(maxTags, Self.azureMaxTagsWhenOrOnly) : maxTags
    }
}
