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
