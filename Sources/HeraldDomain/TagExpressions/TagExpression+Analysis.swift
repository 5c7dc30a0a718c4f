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
