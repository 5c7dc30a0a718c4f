/// An estimate of the share of a slot's registrations an expression selects, from the sizes
/// of its tags' sets there: what the fan-out chooses a slot's plan by (`scan` the slot's packs
/// or resolve it with Redis set operations).
///
/// Tags are taken as independent: `a && b` is `share(a) * share(b)`, `a || b` is
/// `1 - (1 - share(a)) * (1 - share(b))`, `!a` is `1 - share(a)`. Correlated tags make it
/// wrong in either direction, which costs speed, never correctness: both plans deliver the
/// same audience.
extension TagExpression {
    /// The estimated share (0...1) of `registrations` that this expression selects, where
    /// `count(tag)` is the size of the tag's set.
    public func estimatedShare(registrations: Int, count: (String) -> Int) -> Double {
        guard registrations > 0 else { return 0 }
        let total = Double(registrations)
        func share(_ node: TagExpression) -> Double {
            switch node {
            case .tag(let tag): return min(1, Double(max(0, count(tag))) / total)
            case .not(let operand): return 1 - share(operand)
            case .and(let operands): return operands.reduce(1) { $0 * share($1) }
            case .or(let operands): return 1 - operands.reduce(1) { $0 * (1 - share($1)) }
            }
        }
        return min(1, max(0, share(self)))
    }
}
