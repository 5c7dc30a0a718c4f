import HeraldDomain

/// Builds a random expression, and a random way of writing it, from a list of integers that a
/// property-based generator supplies. Shrinking the list shrinks the expression; once the list
/// runs out every choice is 0, which always picks a tag, so building terminates.
struct TagExpressionRecipe {
    /// Small enough for a full truth table (2⁸ assignments), varied enough to cover the alphabet.
    static let alphabet = ["a", "b", "c", "World", "Sports", "follows_RedSox", "$UserId:{alice}", "x.y:z-1"]

    private let choices: [Int]
    private var index = 0

    init(_ choices: [Int]) { self.choices = choices }

    private mutating func pick(_ count: Int) -> Int {
        defer { index += 1 }
        return index < choices.count ? abs(choices[index] % count) : 0
    }

    /// A normalized expression (flattened, as `parse` produces), built with the builders.
    mutating func expression(depth: Int = 0) -> TagExpression {
        switch depth >= 5 ? 0 : pick(5) {
        case 1:
            return !expression(depth: depth + 1)
        case 2:
            var result = expression(depth: depth + 1)
            for _ in 0...pick(3) { result = result && expression(depth: depth + 1) }
            return result
        case 3:
            var result = expression(depth: depth + 1)
            for _ in 0...pick(3) { result = result || expression(depth: depth + 1) }
            return result
        default:
            return .tag(Self.alphabet[pick(Self.alphabet.count)])
        }
    }

    /// Writes `expression` the way a person might: random whitespace, redundant parentheses,
    /// and the parentheses precedence requires.
    mutating func text(for expression: TagExpression) -> String {
        write(expression, context: 0)
    }

    private mutating func space() -> String {
        ["", " ", "  ", "\t", "\n", " \r\n "][pick(6)]
    }

    /// `context` is the binding strength the surrounding operator needs: 0 none, 1 `||`, 2 `&&`, 3 `!`.
    private mutating func write(_ expression: TagExpression, context: Int) -> String {
        let strength: Int
        var text: String
        switch expression {
        case .tag(let tag):
            strength = 3
            text = tag
        case .not(let operand):
            strength = 3
            text = "!" + space() + write(operand, context: 3)
        case .and(let operands):
            strength = 2
            text = ""
            for (position, operand) in operands.enumerated() {
                if position > 0 { text += space() + "&&" + space() }
                text += write(operand, context: 2)
            }
        case .or(let operands):
            strength = 1
            text = ""
            for (position, operand) in operands.enumerated() {
                if position > 0 { text += space() + "||" + space() }
                text += write(operand, context: 1)
            }
        }
        if strength < context || pick(5) == 0 {
            text = "(" + space() + text + space() + ")"
        }
        return text
    }

    /// The meaning of an expression, written independently of `TagExpression.evaluate`.
    static func truth(_ expression: TagExpression, _ tags: Set<String>) -> Bool {
        switch expression {
        case .tag(let tag): tags.contains(tag)
        case .not(let operand): !truth(operand, tags)
        case .and(let operands): operands.map { truth($0, tags) }.reduce(true) { $0 && $1 }
        case .or(let operands): operands.map { truth($0, tags) }.reduce(false) { $0 || $1 }
        }
    }

    /// The tags of a registration whose bits in `mask` select entries of `alphabet`.
    static func tags(_ mask: Int) -> Set<String> {
        Set(alphabet.indices.filter { mask & (1 << $0) != 0 }.map { alphabet[$0] })
    }
}
