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
