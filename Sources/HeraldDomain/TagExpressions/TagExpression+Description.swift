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
