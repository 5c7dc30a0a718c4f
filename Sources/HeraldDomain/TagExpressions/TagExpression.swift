/// A boolean expression over tags that selects registrations, compatible with Azure
/// Notification Hubs' tag expressions: `(follows_RedSox || follows_Cardinals) && location_Boston`.
///
/// Grammar (whitespace-insensitive), precedence `!` > `&&` > `||`:
///
///     expr  := or
///     or    := and ('||' and)*
///     and   := unary ('&&' unary)*
///     unary := '!' unary | '(' expr ')' | TAG
///
/// Tags follow `TagRules`. `and` and `or` are n-ary with at least two operands and never
/// directly contain a node of their own kind (`parse` and the `&&`/`||` builders flatten),
/// which is what makes the canonical `description` round-trip: `parse(e.description) == e`.
public indirect enum TagExpression: Hashable, Sendable {
    case tag(String)
    case not(TagExpression)
    /// At least two operands, none of them an `.and`.
    case and([TagExpression])
    /// At least two operands, none of them an `.or`.
    case or([TagExpression])

    /// Parses `text`, enforcing `limits`.
    public static func parse(
        _ text: String,
        limits: TagExpressionLimits = .default
    ) throws(TagExpressionError) -> TagExpression {
        var parser = TagExpressionParser(text, limits: limits)
        return try parser.parse()
    }

    /// The OR of `tags`, for events that list tags instead of writing an expression
    /// (`"tags": ["World", "Science"]`). Every tag is checked with `TagRules` and the count
    /// with `limits`; errors name the 1-based position of the offending tag as the column and
    /// that tag as the input. Duplicates are dropped, order is kept.
    public static func anyOf(
        _ tags: [String],
        limits: TagExpressionLimits = .default
    ) throws(TagExpressionError) -> TagExpression {
        guard !tags.isEmpty else {
            throw TagExpressionError(code: .empty, column: 1, input: "", message: "tag list is empty")
        }
        var seen: Set<String> = []
        var operands: [TagExpression] = []
        for (index, tag) in tags.enumerated() {
            if let problem = TagRules.problem(with: tag, maxLength: limits.maxTagLength) {
                let code: TagExpressionError.Code = tag.utf8.count > limits.maxTagLength ? .tagTooLong : .invalidTag
                throw TagExpressionError(code: code, column: index + 1, input: tag, message: "tag \(index + 1): \(problem)")
            }
            guard seen.insert(tag).inserted else { continue }
            if operands.count == limits.tagCeiling {
                throw TagExpressionError(
                    code: .tooManyTags, column: index + 1, input: tag,
                    message: "tag list has more than \(limits.tagCeiling) distinct tags; at most \(limits.tagCeiling) are allowed")
            }
            operands.append(.tag(tag))
        }
        return operands.count == 1 ? operands[0] : .or(operands)
    }

    /// The same expression with nested `and`/`or` flattened and one-operand `and`/`or`
    /// unwrapped: the form `parse` produces. Use it on hand-built trees before relying on the
    /// round trip or on `==`.
    public func normalized() -> TagExpression {
        switch self {
        case .tag:
            return self
        case .not(let operand):
            return .not(operand.normalized())
        case .and(let operands):
            var flat: [TagExpression] = []
            for operand in operands { Self.appendFlattening(operand.normalized(), toAnd: &flat) }
            return flat.count == 1 ? flat[0] : .and(flat)
        case .or(let operands):
            var flat: [TagExpression] = []
            for operand in operands { Self.appendFlattening(operand.normalized(), toOr: &flat) }
            return flat.count == 1 ? flat[0] : .or(flat)
        }
    }

    /// `lhs && rhs`, flattened.
    public static func && (lhs: TagExpression, rhs: TagExpression) -> TagExpression {
        var operands: [TagExpression] = []
        appendFlattening(lhs, toAnd: &operands)
        appendFlattening(rhs, toAnd: &operands)
        return .and(operands)
    }

    /// `lhs || rhs`, flattened.
    public static func || (lhs: TagExpression, rhs: TagExpression) -> TagExpression {
        var operands: [TagExpression] = []
        appendFlattening(lhs, toOr: &operands)
        appendFlattening(rhs, toOr: &operands)
        return .or(operands)
    }

    /// `!operand`.
    public static prefix func ! (operand: TagExpression) -> TagExpression {
        .not(operand)
    }

    static func appendFlattening(_ expression: TagExpression, toAnd operands: inout [TagExpression]) {
        if case .and(let inner) = expression { operands.append(contentsOf: inner) } else { operands.append(expression) }
    }

    static func appendFlattening(_ expression: TagExpression, toOr operands: inout [TagExpression]) {
        if case .or(let inner) = expression { operands.append(contentsOf: inner) } else { operands.append(expression) }
    }
}
