/// Recursive-descent parser, one method per grammar rule:
///
///     expr  := or
///     or    := and ('||' and)*
///     and   := unary ('&&' unary)*
///     unary := '!' unary | '(' expr ')' | TAG
///
/// `&&` and `||` chains are flattened into n-ary nodes, also across parentheses, so
/// `a && (b && c)` and `(a && b) && c` give the same tree.
struct TagExpressionParser {
    private var lexer: TagExpressionLexer
    private let limits: TagExpressionLimits
    private var current: TagExpressionLexer.Token
    private var depth = 0
    private var tagCount = 0
    /// Where the first tag beyond Azure's 6-tag rule stands, reported if the expression turns
    /// out not to be OR-only.
    private var offsetOfFirstTagBeyondAzureRule: Int?

    init(_ input: String, limits: TagExpressionLimits) {
        lexer = TagExpressionLexer(input: input, bytes: Array(input.utf8), maxTagLength: limits.maxTagLength)
        self.limits = limits
        current = TagExpressionLexer.Token(kind: .end, offset: 0)
    }

    mutating func parse() throws(TagExpressionError) -> TagExpression {
        if lexer.bytes.count > limits.maxLength {
            throw lexer.error(
                .tooLong, at: limits.maxLength,
                "expression is \(lexer.bytes.count) bytes long; at most \(limits.maxLength) are allowed")
        }
        try advance()
        if current.kind == .end {
            throw lexer.error(.empty, at: 0, "tag expression is empty")
        }
        let expression = try parseOr()
        switch current.kind {
        case .end:
            break
        case .close:
            throw lexer.error(.unmatchedClosingParen, at: current.offset, "')' has no matching '('")
        default:
            throw lexer.error(.expectedOperator, at: current.offset, "expected '&&' or '||' but found \(current.quoted)")
        }
        if limits.azureCompatible, let offset = offsetOfFirstTagBeyondAzureRule, !expression.isOrOnly {
            throw lexer.error(
                .tooManyTags, at: offset,
                "expression has \(tagCount) tags; Azure-compatible mode allows at most \(TagExpressionLimits.azureMaxTagsOtherwise) unless the tags are only joined by '||'"
            )
        }
        return expression
    }

    private mutating func advance() throws(TagExpressionError) {
        current = try lexer.next()
    }

    private mutating func parseOr() throws(TagExpressionError) -> TagExpression {
        let first = try parseAnd()
        guard current.kind == .or else { return first }
        var operands: [TagExpression] = []
        TagExpression.appendFlattening(first, toOr: &operands)
        while current.kind == .or {
            try advance()
            TagExpression.appendFlattening(try parseAnd(), toOr: &operands)
        }
        return .or(operands)
    }

    private mutating func parseAnd() throws(TagExpressionError) -> TagExpression {
        let first = try parseUnary()
        guard current.kind == .and else { return first }
        var operands: [TagExpression] = []
        TagExpression.appendFlattening(first, toAnd: &operands)
        while current.kind == .and {
            try advance()
            TagExpression.appendFlattening(try parseUnary(), toAnd: &operands)
        }
        return .and(operands)
    }

    private mutating func parseUnary() throws(TagExpressionError) -> TagExpression {
        let token = current
        switch token.kind {
        case .tag(let tag):
            try count(tagAt: token.offset)
            try advance()
            return .tag(tag)
        case .not:
            try enterNesting(at: token.offset)
            try advance()
            let operand = try parseUnary()
            depth -= 1
            return .not(operand)
        case .open:
            try enterNesting(at: token.offset)
            try advance()
            let inner = try parseOr()
            switch current.kind {
            case .close:
                break
            case .end:
                throw lexer.error(.expectedClosingParen, at: current.offset, "expected ')'")
            default:
                throw lexer.error(
                    .expectedOperator, at: current.offset,
                    "expected '&&', '||' or ')' but found \(current.quoted)")
            }
            depth -= 1
            try advance()
            return inner
        case .end:
            throw lexer.error(.unexpectedEnd, at: token.offset, "expected tag or '('")
        case .and, .or, .close:
            throw lexer.error(.expectedTag, at: token.offset, "expected tag or '(' but found \(token.quoted)")
        }
    }

    private mutating func enterNesting(at offset: Int) throws(TagExpressionError) {
        depth += 1
        if depth > limits.maxDepth {
            throw lexer.error(
                .tooDeep, at: offset,
                "nesting is deeper than \(limits.maxDepth) levels of '(' and '!'")
        }
    }

    private mutating func count(tagAt offset: Int) throws(TagExpressionError) {
        tagCount += 1
        if tagCount == TagExpressionLimits.azureMaxTagsOtherwise + 1 {
            offsetOfFirstTagBeyondAzureRule = offset
        }
        let ceiling = limits.tagCeiling
        if tagCount > ceiling {
            throw lexer.error(
                .tooManyTags, at: offset,
                "expression has more than \(ceiling) tags; at most \(ceiling) are allowed")
        }
    }
}
