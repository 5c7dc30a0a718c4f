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

extension TagExpression {
    /// Whether a registration carrying `tags` is selected.
    ///
    /// Called per registration on some fan-out paths, so it allocates nothing: it walks the
    /// tree in place and short-circuits `&&` and `||`.
    public func evaluate(_ tags: Set<String>) -> Bool {
        switch self {
        case .tag(let tag):
            return tags.contains(tag)
        case .not(let operand):
            return !operand.evaluate(tags)
        case .and(let operands):
            for operand in operands where !operand.evaluate(tags) { return false }
            return true
        case .or(let operands):
            for operand in operands where operand.evaluate(tags) { return true }
            return false
        }
    }

    /// Whether a registration is selected, given a membership test for its tags (for callers
    /// whose tags live in another structure, such as a sorted array or a Redis reply).
    public func evaluate(contains: (String) -> Bool) -> Bool {
        switch self {
        case .tag(let tag):
            return contains(tag)
        case .not(let operand):
            return !operand.evaluate(contains: contains)
        case .and(let operands):
            for operand in operands where !operand.evaluate(contains: contains) { return false }
            return true
        case .or(let operands):
            for operand in operands where operand.evaluate(contains: contains) { return true }
            return false
        }
    }
}

extension TagExpression: CustomStringConvertible {
    /// The canonical form: operators spaced (`a && b`, `a || b`, `!a`), parentheses only where
    /// precedence needs them (`(a || b) && c`, `!(a && b)`). `parse(description)` gives back
    /// the same value for every normalized expression (see `normalized()`).
    public var description: String {
        var text = ""
        write(to: &text)
        return text
    }

    private func write(to text: inout String) {
        switch self {
        case .tag(let tag):
            text += tag
        case .not(let operand):
            text += "!"
            operand.writeOperand(to: &text, parenthesize: !operand.isAtom)
        case .and(let operands):
            for (index, operand) in operands.enumerated() {
                if index > 0 { text += " && " }
                operand.writeOperand(to: &text, parenthesize: operand.isOr)
            }
        case .or(let operands):
            for (index, operand) in operands.enumerated() {
                if index > 0 { text += " || " }
                // A hand-built `or` inside an `or` keeps its parentheses, so printing never
                // changes meaning even before normalization.
                operand.writeOperand(to: &text, parenthesize: operand.isOr)
            }
        }
    }

    private func writeOperand(to text: inout String, parenthesize: Bool) {
        if parenthesize { text += "(" }
        write(to: &text)
        if parenthesize { text += ")" }
    }

    private var isAtom: Bool {
        switch self {
        case .tag, .not: true
        case .and, .or: false
        }
    }

    private var isOr: Bool {
        if case .or = self { true } else { false }
    }
}

/// Facts the planner uses to choose how to resolve an expression.
extension TagExpression {
    /// Every distinct tag the expression names.
    public var referencedTags: Set<String> {
        var tags: Set<String> = []
        collectTags(into: &tags)
        return tags
    }

    /// Tag occurrences, counting repeats (`a || a` has two); the quantity the limits bound.
    public var tagCount: Int {
        switch self {
        case .tag: 1
        case .not(let operand): operand.tagCount
        case .and(let operands), .or(let operands): operands.reduce(0) { $0 + $1.tagCount }
        }
    }

    /// True for a single tag or tags joined only by `||`: such an expression is a plain union of
    /// tag sets (and Azure allows 20 tags in it instead of 6).
    public var isOrOnly: Bool {
        switch self {
        case .tag:
            return true
        case .or(let operands):
            for operand in operands {
                guard case .tag = operand else { return false }
            }
            return true
        case .not, .and:
            return false
        }
    }

    /// The tags of an OR-only expression in order of appearance (repeats removed), else `nil`.
    public var orOnlyTags: [String]? {
        guard isOrOnly else { return nil }
        var seen: Set<String> = []
        var tags: [String] = []
        switch self {
        case .tag(let tag):
            tags.append(tag)
        case .or(let operands):
            for case .tag(let tag) in operands where seen.insert(tag).inserted { tags.append(tag) }
        case .not, .and:
            break
        }
        return tags
    }

    /// True when a registration carrying none of the referenced tags is selected (`!Sports`,
    /// `!a || b`). Such an expression cannot be answered from tag sets alone: the planner must
    /// start from all registrations.
    public var matchesWithoutTags: Bool {
        evaluate(contains: { _ in false })
    }

    private func collectTags(into tags: inout Set<String>) {
        switch self {
        case .tag(let tag):
            tags.insert(tag)
        case .not(let operand):
            operand.collectTags(into: &tags)
        case .and(let operands), .or(let operands):
            for operand in operands { operand.collectTags(into: &tags) }
        }
    }
}
