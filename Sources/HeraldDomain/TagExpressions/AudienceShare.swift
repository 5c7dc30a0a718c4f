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

extension TagSetPlan {
    /// About how many set members Redis reads to run this plan in a slot of `registrations`
    /// and stream its result, where `count(tag)` is the size of the tag's set: a union reads
    /// every operand, an intersection its smallest operand once per operand, a difference its
    /// first operand once per operand; temporaries are sized by the independence estimate of
    /// `TagExpression.estimatedShare`. The fan-out compares it with the slot's registrations
    /// to choose between this plan and a scan of the slot.
    public func estimatedReads(registrations: Int, count: (String) -> Int) -> Double {
        let total = Double(max(registrations, 0))
        guard total > 0 else { return 0 }
        var temporaries = [Double](repeating: 0, count: temporaryCount)
        func size(_ operand: Operand) -> Double {
            switch operand {
            case .tag(let tag): min(total, Double(max(0, count(tag))))
            case .all: total
            case .temporary(let index): index < temporaries.count ? temporaries[index] : total
            }
        }
        var reads = 0.0
        for step in steps {
            let sizes = step.sources.map(size)
            switch step {
            case .union:
                reads += sizes.reduce(0, +)
                temporaries[step.destination] = total * (1 - sizes.reduce(1) { $0 * (1 - $1 / total) })
            case .intersection:
                reads += (sizes.min() ?? 0) * Double(sizes.count)
                temporaries[step.destination] = total * sizes.reduce(1) { $0 * $1 / total }
            case .difference:
                let first = sizes.first ?? 0
                reads += first * Double(sizes.count)
                temporaries[step.destination] = sizes.dropFirst().reduce(first) { $0 * (1 - $1 / total) }
            }
        }
        return reads + size(result)
    }
}
