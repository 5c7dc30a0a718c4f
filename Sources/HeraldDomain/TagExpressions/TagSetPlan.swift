/// An expression compiled into set algebra over per-tag sets, so that the fan-out can resolve it
/// inside one Redis slot with SUNIONSTORE / SINTERSTORE / SDIFFSTORE and then SSCAN the result.
///
/// Operands name sets: a tag's set (`herald:{slot}:tag:<tag>`), the set of all registrations in
/// the slot (`herald:{slot}:all`), or a temporary written by an earlier step. Each step writes a
/// new temporary numbered in order (0, 1, ...), so steps run in array order and every temporary
/// is written once; the caller names and deletes the `temporaryCount` temporaries.
///
/// A single tag needs no steps (`result == .tag(x)`). `!` is compiled into differences rather
/// than complements: `a && !b` is one SDIFFSTORE, `!(a || b)` is `all - a - b`, and
/// intersections are taken before differences. `all` is read only when the expression can
/// select registrations that carry none of its tags (see `TagExpression.matchesWithoutTags`).
public struct TagSetPlan: Hashable, Sendable {
    public enum Operand: Hashable, Sendable {
        case tag(String)
        case all
        case temporary(Int)
    }

    public enum Step: Hashable, Sendable {
        /// SUNIONSTORE into the temporary: the union of the operands.
        case union(into: Int, [Operand])
        /// SINTERSTORE into the temporary: the intersection of the operands.
        case intersection(into: Int, [Operand])
        /// SDIFFSTORE into the temporary: the first operand minus each of `minus`.
        case difference(into: Int, Operand, minus: [Operand])

        /// The temporary this step writes.
        public var destination: Int {
            switch self {
            case .union(let into, _), .intersection(let into, _), .difference(let into, _, _): into
            }
        }

        /// The operands in the order Redis takes them (for SDIFFSTORE, the minuend first).
        public var sources: [Operand] {
            switch self {
            case .union(_, let operands), .intersection(_, let operands): operands
            case .difference(_, let minuend, let subtrahends): [minuend] + subtrahends
            }
        }
    }

    public var steps: [Step]
    /// The set holding the answer once every step has run.
    public var result: Operand
    public var temporaryCount: Int

    public init(steps: [Step], result: Operand, temporaryCount: Int) {
        self.steps = steps
        self.result = result
        self.temporaryCount = temporaryCount
    }

    /// Whether any step or the result reads the all-registrations set.
    public var readsAll: Bool {
        result == .all || steps.contains { $0.sources.contains(.all) }
    }

    /// Runs the plan in memory. Used by tests to prove the plan equals evaluation, and usable as
    /// a reference for any other executor.
    public func execute(sets: (String) -> Set<String>, all: Set<String>) -> Set<String> {
        var temporaries = [Set<String>](repeating: [], count: temporaryCount)
        func value(_ operand: Operand) -> Set<String> {
            switch operand {
            case .tag(let tag): sets(tag)
            case .all: all
            case .temporary(let index): temporaries[index]
            }
        }
        for step in steps {
            switch step {
            case .union(let into, let operands):
                var set = Set<String>()
                for operand in operands { set.formUnion(value(operand)) }
                temporaries[into] = set
            case .intersection(let into, let operands):
                var set = value(operands[0])
                for operand in operands.dropFirst() { set.formIntersection(value(operand)) }
                temporaries[into] = set
            case .difference(let into, let minuend, let subtrahends):
                var set = value(minuend)
                for operand in subtrahends { set.subtract(value(operand)) }
                temporaries[into] = set
            }
        }
        return value(result)
    }
}

extension TagSetPlan: CustomStringConvertible {
    /// One line per step in Redis terms, then the result:
    /// `t0 = SINTER a b`, `t1 = SDIFF t0 c`, `result t1`.
    public var description: String {
        var lines: [String] = []
        for step in steps {
            let command: String
            switch step {
            case .union: command = "SUNION"
            case .intersection: command = "SINTER"
            case .difference: command = "SDIFF"
            }
            lines.append("t\(step.destination) = \(command) " + step.sources.map(Self.name).joined(separator: " "))
        }
        lines.append("result \(Self.name(result))")
        return lines.joined(separator: "\n")
    }

    private static func name(_ operand: Operand) -> String {
        switch operand {
        case .tag(let tag): tag
        case .all: "*all*"
        case .temporary(let index): "t\(index)"
        }
    }
}

extension TagExpression {
    /// The expression as set operations for Redis; see `TagSetPlan`.
    public func setPlan() -> TagSetPlan {
        var compiler = TagSetPlanCompiler()
        return compiler.compile(self)
    }
}
