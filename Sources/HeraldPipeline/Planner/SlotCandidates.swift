import HeraldDomain

/// Decides, from which tag sets exist in a slot, whether the expression can select anything
/// there, so a narrow event (`$UserId:{alice}`) is planned over its few non-empty slots only.
///
/// The test is an over-approximation: a tag counts as present when its set in the slot is
/// non-empty, and every `!x` counts as true (`x` may be missing from some registrations even
/// when its set exists). A slot it rejects certainly has no recipient; a slot it keeps may
/// still turn out empty, which only costs the fan-out one cheap set operation.
public enum SlotCandidates {
    /// Whether the pre-check can help at all: an expression that selects registrations without
    /// any of its tags (`!Sports`) may match in every slot.
    public static func applies(to expression: TagExpression) -> Bool {
        !expression.matchesWithoutTags
    }

    /// True when a slot whose non-empty tag sets are `present` may hold a recipient.
    public static func mayMatch(_ expression: TagExpression, present: (String) -> Bool) -> Bool {
        switch expression {
        case .tag(let tag):
            return present(tag)
        case .not:
            return true
        case .and(let operands):
            return operands.allSatisfy { mayMatch($0, present: present) }
        case .or(let operands):
            return operands.contains { mayMatch($0, present: present) }
        }
    }

    /// The tags whose presence decides `mayMatch`: those not under a `!`.
    public static func positiveTags(of expression: TagExpression) -> [String] {
        var seen: Set<String> = []
        var tags: [String] = []
        func walk(_ node: TagExpression) {
            switch node {
            case .tag(let tag):
                if seen.insert(tag).inserted { tags.append(tag) }
            case .not:
                break
            case .and(let operands), .or(let operands):
                operands.forEach(walk)
            }
        }
        walk(expression)
        return tags
    }
}
