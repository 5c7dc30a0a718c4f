/// Parses the expressions inside one run of text: a JSON string value, an XML text or
/// attribute value, or a whole text template.
///
/// A run is one of three shapes:
/// - plain text with no `$(`, `.(`, `%(` or `#(`: left exactly as written;
/// - a composite, `{ term + term + ... }` where a term is an expression or a quoted
///   literal (`'..'` or `".."`, a doubled quote standing for itself), possibly surrounded
///   by whitespace;
/// - text with expressions anywhere in it. Azure only substitutes a value that is exactly
///   one expression; Herald also interpolates expressions inside longer text
///   (`"Breaking: $(title)"`), which is the same thing when the run is a single expression.
struct TemplateContentParser {
    private let text: TemplateText
    private let source: TemplateSource
    private let limits: TemplateLimits
    private var index = 0

    init(text: TemplateText, source: TemplateSource, limits: TemplateLimits) {
        self.text = text
        self.source = source
        self.limits = limits
    }

    private var bytes: [UInt8] { text.bytes }

    /// True when `bytes` holds an expression opener anywhere: the cheap test that lets most
    /// literal text skip parsing.
    static func containsMarker<C: RandomAccessCollection<UInt8>>(_ bytes: C) -> Bool where C.Index == Int {
        firstMarker(in: bytes) != nil
    }

    static func firstMarker<C: RandomAccessCollection<UInt8>>(in bytes: C) -> Int? where C.Index == Int {
        var index = bytes.startIndex
        while index + 1 < bytes.endIndex {
            if bytes[index + 1] == TemplateByte.openParen && isOperator(bytes[index]) { return index }
            index += 1
        }
        return nil
    }

    @inline(__always)
    static func isOperator(_ byte: UInt8) -> Bool {
        byte == TemplateByte.dollar || byte == TemplateByte.dot || byte == TemplateByte.percent || byte == TemplateByte.hash
    }

    @inline(__always)
    static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x41...0x5A, 0x61...0x7A, 0x30...0x39, TemplateByte.underscore: true
        default: false
        }
    }

    /// The parts of the run, or nil when it holds no expression and stays as written.
    mutating func parse() throws(TemplateError) -> [TemplatePart]? {
        guard Self.firstMarker(in: bytes) != nil else { return nil }
        var low = 0
        var high = bytes.count
        while low < high && TemplateByte.isSpace(bytes[low]) { low += 1 }
        while high > low && TemplateByte.isSpace(bytes[high - 1]) { high -= 1 }
        guard bytes[low] == TemplateByte.openBrace else { return try parseInterpolation() }
        guard bytes[high - 1] == TemplateByte.closeBrace else {
            throw error(
                .unclosedComposite, at: low,
                "a value that starts with '{' and holds expressions is a composite and must end with '}'"
            )
        }
        var parts: [TemplatePart] = []
        if low > 0 { parts.append(.literal(Array(bytes[..<low]))) }
        index = low
        try parseComposite(end: high, into: &parts)
        if high < bytes.count { parts.append(.literal(Array(bytes[high...]))) }
        return parts
    }

    // MARK: Shapes

    private mutating func parseInterpolation() throws(TemplateError) -> [TemplatePart] {
        var parts: [TemplatePart] = []
        var literalStart = 0
        index = 0
        while index < bytes.count {
            if isMarker(at: index) {
                if literalStart < index { parts.append(.literal(Array(bytes[literalStart..<index]))) }
                parts.append(.expression(try parseExpression()))
                literalStart = index
            } else {
                index += 1
            }
        }
        if literalStart < bytes.count { parts.append(.literal(Array(bytes[literalStart...]))) }
        return parts
    }

    private mutating func parseComposite(end: Int, into parts: inout [TemplatePart]) throws(TemplateError) {
        let open = index
        index += 1
        var termCount = 0
        while true {
            skipSpaces()
            guard index < bytes.count else {
                throw error(.unclosedComposite, at: open, "the composite has no closing '}'")
            }
            let byte = bytes[index]
            if isMarker(at: index) {
                let expression = try parseExpression()
                if expression.operation == .number {
                    throw source.error(
                        .numberInComposite, at: expression.offset,
                        "'#(' cannot be part of a composite: a composite always produces a string"
                    )
                }
                parts.append(.expression(expression))
            } else if byte == TemplateByte.singleQuote || byte == TemplateByte.doubleQuote {
                parts.append(.literal(try parseQuotedLiteral()))
            } else if byte == TemplateByte.closeBrace {
                throw error(
                    .invalidComposite, at: index,
                    termCount == 0
                        ? "empty composite: expected an expression or a quoted literal"
                        : "expected an expression or a quoted literal after '+'"
                )
            } else {
                throw error(
                    .invalidComposite, at: index,
                    "expected an expression or a quoted literal such as 'text' in the composite"
                )
            }
            termCount += 1
            skipSpaces()
            guard index < bytes.count else {
                throw error(.unclosedComposite, at: open, "the composite has no closing '}'")
            }
            if bytes[index] == TemplateByte.plus {
                index += 1
                continue
            }
            if bytes[index] == TemplateByte.closeBrace {
                index += 1
                break
            }
            throw error(.invalidComposite, at: index, "expected '+' or '}' in the composite")
        }
        skipSpaces()
        if index < end {
            throw error(.invalidComposite, at: index, "unexpected text after the composite's closing '}'")
        }
    }

    private mutating func parseQuotedLiteral() throws(TemplateError) -> [UInt8] {
        let start = index
        let quote = bytes[index]
        index += 1
        var literal: [UInt8] = []
        while index < bytes.count {
            if bytes[index] == quote {
                if index + 1 < bytes.count && bytes[index + 1] == quote {
                    literal.append(quote)
                    index += 2
                    continue
                }
                index += 1
                return literal
            }
            literal.append(bytes[index])
            index += 1
        }
        throw error(
            .unterminatedLiteral, at: start,
            "the literal has no closing \(quote == TemplateByte.singleQuote ? "'" : "\"")"
        )
    }

    // MARK: Expression

    /// `op ( name [| name ...] [: {default}] [, n] )` with spaces allowed between the pieces.
    private mutating func parseExpression() throws(TemplateError) -> TemplateExpression {
        let start = index
        let operatorByte = bytes[index]
        let opener = String(decoding: [operatorByte, TemplateByte.openParen], as: UTF8.self)
        index += 2
        skipSpaces()
        guard let name = try propertyName(opener, start) else {
            throw error(
                .invalidPropertyName, at: index,
                bytes[index] == TemplateByte.closeParen
                    ? "empty property name in '\(opener)'"
                    : "expected a property name (letters, digits and '_') after '\(opener)'"
            )
        }
        skipSpaces()
        let (alternatives, lastNameEnd) = try parseAlternatives(opener, start, firstNameEnd: name.upperBound)
        let fallback = try parseDefault(opener, start)
        let length = try parseLength(opener, start)

        guard index < bytes.count else { throw unclosed(opener, start) }
        guard bytes[index] == TemplateByte.closeParen else {
            if index == lastNameEnd {
                throw error(
                    .invalidPropertyName, at: index,
                    "property names may contain only letters, digits and '_'"
                )
            }
            let expected =
                length != nil
                ? "expected ')' after the length"
                : fallback != nil
                    ? "expected ',' or ')' after the default value"
                    : "expected '|', ',', ':' or ')' after the property name"
            throw error(.invalidExpression, at: index, expected)
        }
        index += 1
        return TemplateExpression(
            operation: try operation(operatorByte, length: length, opener: opener, start: start),
            property: lowercasedName(name),
            alternatives: alternatives,
            fallback: fallback,
            offset: text.sourceOffset(start)
        )
    }

    /// The property name at `index`, or nil when none starts there (the caller says why).
    private mutating func propertyName(_ opener: String, _ start: Int) throws(TemplateError) -> Range<Int>? {
        let nameStart = index
        while index < bytes.count && Self.isNameByte(bytes[index]) { index += 1 }
        guard nameStart < index else {
            guard index < bytes.count else { throw unclosed(opener, start) }
            return nil
        }
        if index - nameStart > limits.maxPropertyNameLength {
            throw error(
                .invalidPropertyName, at: nameStart,
                "property name is longer than \(limits.maxPropertyNameLength) characters"
            )
        }
        return nameStart..<index
    }

    /// `| q | r`: the properties read, in order, when the event has none of those before;
    /// and where the last name read ends.
    private mutating func parseAlternatives(
        _ opener: String, _ start: Int, firstNameEnd: Int
    ) throws(TemplateError) -> ([String], Int) {
        var alternatives: [String] = []
        var lastNameEnd = firstNameEnd
        while index < bytes.count && bytes[index] == TemplateByte.pipe {
            index += 1
            skipSpaces()
            guard let name = try propertyName(opener, start) else {
                throw error(.invalidPropertyName, at: index, "expected a property name after '|'")
            }
            if alternatives.count == Self.maxAlternatives {
                throw error(
                    .invalidExpression, at: name.lowerBound,
                    "at most \(Self.maxAlternatives) properties may follow the first with '|'")
            }
            alternatives.append(lowercasedName(name))
            lastNameEnd = index
            skipSpaces()
        }
        return (alternatives, lastNameEnd)
    }

    /// `: {default}`, if there.
    private mutating func parseDefault(_ opener: String, _ start: Int) throws(TemplateError) -> String? {
        guard index < bytes.count && bytes[index] == TemplateByte.colon else { return nil }
        index += 1
        skipSpaces()
        guard index < bytes.count else { throw unclosed(opener, start) }
        guard bytes[index] == TemplateByte.openBrace else {
            throw error(
                .invalidExpression, at: index,
                "expected '{' to start the default value, as in $(name:{default})"
            )
        }
        let open = index
        guard let close = bytes[(open + 1)...].firstIndex(of: TemplateByte.closeBrace) else {
            throw error(.unclosedExpression, at: open, "the default value has no closing '}'")
        }
        index = close + 1
        skipSpaces()
        return String(decoding: bytes[(open + 1)..<close], as: UTF8.self)
    }

    /// `, n`, if there: a length from 1 to the limit.
    private mutating func parseLength(_ opener: String, _ start: Int) throws(TemplateError) -> Int? {
        guard index < bytes.count && bytes[index] == TemplateByte.comma else { return nil }
        index += 1
        skipSpaces()
        let digitsStart = index
        var value = 0
        while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 {
            value = min(value * 10 + Int(bytes[index] - 0x30), limits.maxClipLength + 1)
            index += 1
        }
        if index == digitsStart {
            guard index < bytes.count else { throw unclosed(opener, start) }
            throw error(.invalidLength, at: index, "expected a length (a whole number) after ','")
        }
        if value < 1 || value > limits.maxClipLength {
            throw error(.invalidLength, at: digitsStart, "the length must be between 1 and \(limits.maxClipLength)")
        }
        skipSpaces()
        return value
    }

    /// What the operator does with the value, given the length it was written with.
    private func operation(
        _ operatorByte: UInt8, length: Int?, opener: String, start: Int
    ) throws(TemplateError) -> TemplateExpression.Operation {
        switch operatorByte {
        case TemplateByte.dot:
            guard let length else {
                throw error(.invalidLength, at: start, "'.(' needs a length, as in .(title, 20)")
            }
            return .ellipsis(length)
        case TemplateByte.percent, TemplateByte.hash:
            guard length == nil else {
                throw error(.invalidLength, at: start, "'\(opener)' takes no length")
            }
            return operatorByte == TemplateByte.percent ? .percentEncode : .number
        default:
            return length.map { .clip($0) } ?? .value
        }
    }

    private func lowercasedName(_ range: Range<Int>) -> String {
        String(decoding: bytes[range].map(TemplateByte.lowercased), as: UTF8.self)
    }

    // MARK: Helpers

    /// Properties a `|` chain may add after the first.
    static let maxAlternatives = 8

    private func isMarker(at position: Int) -> Bool {
        position + 1 < bytes.count && bytes[position + 1] == TemplateByte.openParen && Self.isOperator(bytes[position])
    }

    private mutating func skipSpaces() {
        while index < bytes.count && TemplateByte.isSpace(bytes[index]) { index += 1 }
    }

    private func unclosed(_ opener: String, _ start: Int) -> TemplateError {
        error(.unclosedExpression, at: start, "unclosed '\(opener)': expected ')'")
    }

    private func error(_ code: TemplateError.Code, at position: Int, _ message: String) -> TemplateError {
        source.error(code, at: text.sourceOffset(position), message)
    }
}
