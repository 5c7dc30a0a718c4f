/// Compiles a `TagExpression` into a `TagSetPlan`.
///
/// Each subexpression compiles to a `Form`: a set that has not been written yet (one operand,
/// or a union / intersection / difference of operands), possibly complemented against `all`.
/// Keeping complements symbolic is what turns `!` into differences instead of
/// `all - x` steps: with A = set of the positive operands and N = the complemented ones,
///
///     and:  ∩A ∩ ∩(all - Nᵢ) = ∩A - ∪N            (all - ∪N when A is empty)
///     or:   ∪A ∪ ∪(all - Nᵢ) = all - (∩N - ∪A)    (just ∪A when N is empty)
///
/// so `all` only appears in the final step, and only when the expression can select a
/// registration that carries none of its tags. Pending forms are merged into their parent where
/// the algebra allows (a union into a union, `x - m` into an intersection as `(x ∩ ...) - m`,
/// a complemented union into a difference's subtrahends) and written to a temporary otherwise.
struct TagSetPlanCompiler {
    typealias Operand = TagSetPlan.Operand

    private enum Pending {
        case operand(Operand)
        case union([Operand])
        case intersection([Operand])
        case difference(Operand, minus: [Operand])
    }

    private struct Form {
        var pending: Pending
        /// The form stands for `all - pending`.
        var complemented: Bool
    }

    private var steps: [TagSetPlan.Step] = []

    mutating func compile(_ expression: TagExpression) -> TagSetPlan {
        steps = []
        let form = compileForm(expression)
        let result: Operand
        if !form.complemented {
            result = materialize(form.pending)
        } else {
            switch form.pending {
            case .operand(let operand):
                result = materialize(.difference(.all, minus: [operand]))
            case .union(let operands):
                result = materialize(.difference(.all, minus: operands))
            case .intersection, .difference:
                let inner = materialize(form.pending)
                result = materialize(.difference(.all, minus: [inner]))
            }
        }
        return TagSetPlan(steps: steps, result: result, temporaryCount: steps.count)
    }

    private mutating func compileForm(_ expression: TagExpression) -> Form {
        switch expression {
        case .tag(let tag):
            return Form(pending: .operand(.tag(tag)), complemented: false)
        case .not(let operand):
            var form = compileForm(operand)
            form.complemented.toggle()
            return form
        case .and(let operands):
            return compileAnd(operands)
        case .or(let operands):
            return compileOr(operands)
        }
    }

    private mutating func compileAnd(_ operands: [TagExpression]) -> Form {
        var intersected: [Operand] = []
        var subtracted: [Operand] = []
        for operand in operands {
            let form = compileForm(operand)
            switch (form.complemented, form.pending) {
            case (false, .operand(let single)):
                intersected.append(single)
            case (false, .intersection(let sets)):
                intersected.append(contentsOf: sets)
            case (false, .difference(let minuend, let minus)):
                // (x - m) ∩ rest = (x ∩ rest) - m: intersect first, subtract once at the end.
                intersected.append(minuend)
                subtracted.append(contentsOf: minus)
            case (true, .operand(let single)):
                subtracted.append(single)
            case (true, .union(let sets)):
                // De Morgan: ∩ (all - (a ∪ b)) = - a - b.
                subtracted.append(contentsOf: sets)
            case (false, .union), (true, .intersection), (true, .difference):
                let written = materialize(form.pending)
                if form.complemented { subtracted.append(written) } else { intersected.append(written) }
            }
        }
        if intersected.isEmpty {
            return Form(pending: Self.union(subtracted), complemented: true)
        }
        let intersection = Self.intersection(intersected)
        if subtracted.isEmpty {
            return Form(pending: intersection, complemented: false)
        }
        return Form(pending: .difference(materialize(intersection), minus: Self.unique(subtracted)), complemented: false)
    }

    private mutating func compileOr(_ operands: [TagExpression]) -> Form {
        var united: [Operand] = []
        var complementsIntersected: [Operand] = []
        for operand in operands {
            let form = compileForm(operand)
            switch (form.complemented, form.pending) {
            case (false, .operand(let single)):
                united.append(single)
            case (false, .union(let sets)):
                united.append(contentsOf: sets)
            case (true, .operand(let single)):
                complementsIntersected.append(single)
            case (true, .intersection(let sets)):
                // De Morgan: (all - (a ∩ b)) ∪ ... = all - ((a ∩ b) ∩ ...).
                complementsIntersected.append(contentsOf: sets)
            case (false, .intersection), (false, .difference), (true, .union), (true, .difference):
                let written = materialize(form.pending)
                if form.complemented { complementsIntersected.append(written) } else { united.append(written) }
            }
        }
        if complementsIntersected.isEmpty {
            return Form(pending: Self.union(united), complemented: false)
        }
        let intersection = Self.intersection(complementsIntersected)
        if united.isEmpty {
            return Form(pending: intersection, complemented: true)
        }
        return Form(pending: .difference(materialize(intersection), minus: Self.unique(united)), complemented: true)
    }

    /// Writes a pending set to a new temporary (or returns the operand it already is).
    private mutating func materialize(_ pending: Pending) -> Operand {
        let step: TagSetPlan.Step
        let into = steps.count
        switch pending {
        case .operand(let operand):
            return operand
        case .union(let operands):
            step = .union(into: into, operands)
        case .intersection(let operands):
            step = .intersection(into: into, operands)
        case .difference(let minuend, let minus):
            step = .difference(into: into, minuend, minus: minus)
        }
        steps.append(step)
        return .temporary(into)
    }

    private static func union(_ operands: [Operand]) -> Pending {
        let operands = unique(operands)
        return operands.count == 1 ? .operand(operands[0]) : .union(operands)
    }

    private static func intersection(_ operands: [Operand]) -> Pending {
        let operands = unique(operands)
        return operands.count == 1 ? .operand(operands[0]) : .intersection(operands)
    }

    /// Repeats (`a || a`) would only make Redis read a set twice.
    private static func unique(_ operands: [Operand]) -> [Operand] {
        guard operands.count > 1 else { return operands }
        var seen: Set<Operand> = []
        return operands.filter { seen.insert($0).inserted }
    }
}
