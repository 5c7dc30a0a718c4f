/// The compiled form of a template, shared by every copy of a `CompiledTemplate`.
final class TemplateProgram: Sendable {
    let literals: [UInt8]
    let segments: [TemplateSegment]
    let substitutions: [TemplateSubstitution]
    let referencedProperties: Set<String>
    let isConstant: Bool
    /// Rough output size, to size the render buffer once.
    let estimatedSize: Int

    init(
        literals: [UInt8], segments: [TemplateSegment], substitutions: [TemplateSubstitution],
        referencedProperties: Set<String>
    ) {
        self.literals = literals
        self.segments = segments
        self.substitutions = substitutions
        self.referencedProperties = referencedProperties
        self.isConstant = substitutions.isEmpty
        self.estimatedSize = literals.count + substitutions.count * 48
    }
}

/// One step of rendering: copy a run of prepared bytes, or substitute a property.
///
/// Payloads are plain integers so walking the segments costs no reference counting.
enum TemplateSegment: Sendable {
    /// A range of `TemplateProgram.literals`, already escaped for its context.
    case literal(Range<Int>)
    /// An index into `TemplateProgram.substitutions`.
    case substitution(Int)
}

/// A property value to write: the expression that reads and transforms it, and the escaping
/// of the place it lands in. A `.number` expression with `.jsonString` escaping stands for a
/// whole JSON value and writes its own quotes when the value is not a number or boolean.
struct TemplateSubstitution: Sendable {
    var expression: TemplateExpression
    var escaping: TemplateEscaping
}

/// One `$(...)`, `.(...)`, `%(...)` or `#(...)` expression, as compiled.
struct TemplateExpression: Sendable, Hashable {
    enum Operation: Sendable, Hashable {
        /// `$(p)`: the value as it is.
        case value
        /// `$(p, n)`: the first `n` Characters.
        case clip(Int)
        /// `.(p, n)`: at most `n` Characters, the last three being "..." when clipped.
        case ellipsis(Int)
        /// `%(p)`: every byte outside RFC 3986 unreserved characters as `%XX`.
        case percentEncode
        /// `#(p)`: a bare JSON number or boolean when the value is one, otherwise a string.
        case number
    }

    var operation: Operation
    /// Lower-cased (ASCII) so lookups match `TemplateProperties`' folded keys.
    var property: String
    /// `$(p | q | r)`: the properties read, in order, when the event lacks the one before
    /// (a locale's fallbacks, such as `News_fr_CA | News_fr | News_en`); lower-cased too.
    var alternatives: [String] = []
    /// `$(p:{fallback})`: used when the event has no such property.
    var fallback: String?
    /// Where the expression starts in the body, for errors found after parsing.
    var offset: Int
}

/// A piece of a text run: literal bytes (already decoded) or an expression.
enum TemplatePart: Sendable {
    case literal([UInt8])
    case expression(TemplateExpression)
}

/// The syntax a template body is written in, which decides where expressions may stand and
/// how substituted values are escaped.
public enum TemplateFormat: String, Sendable, Codable, CaseIterable {
    /// A JSON document (APNs, FCM, web push). Expressions stand inside string values.
    case json
    /// An XML document (WNS toast and tile). Expressions stand in text and attribute values.
    case xml
    /// Plain text: header values such as `apns-push-type` or `X-WNS-Type`, and the expiry
    /// template. The whole body is one value.
    case text
}

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
