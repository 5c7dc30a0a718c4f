/// Validates a JSON template body and splits it into segments in one pass.
///
/// Bytes are copied through unchanged except for string values that hold expressions, so a
/// template without expressions renders to exactly its source. A recursive-descent walk,
/// one method per grammar rule, bounded by `TemplateLimits.maxNestingDepth`.
struct JSONTemplateScanner {
    private let source: TemplateSource
    private let limits: TemplateLimits
    private var output: TemplateSegmentList
    private var index = 0
    /// Source bytes before this offset are already in `output`.
    private var copiedUpTo = 0

    init(source: TemplateSource, limits: TemplateLimits) {
        self.source = source
        self.limits = limits
        self.output = TemplateSegmentList(source: source, limits: limits)
    }

    private var bytes: [UInt8] { source.bytes }

    mutating func scan() throws(TemplateError) -> TemplateProgram {
        skipWhitespace()
        guard index < bytes.count else { throw error(at: index, "the body is empty: expected a JSON value") }
        try scanValue(depth: 1)
        skipWhitespace()
        if index < bytes.count { throw error(at: index, "unexpected text after the JSON value") }
        output.appendSource(copiedUpTo..<bytes.count)
        return output.finish()
    }

    // MARK: Grammar

    private mutating func scanValue(depth: Int) throws(TemplateError) {
        guard index < bytes.count else { throw error(at: index, "unexpected end of the body: expected a JSON value") }
        switch bytes[index] {
        case TemplateByte.openBrace: try scanObject(depth: depth)
        case TemplateByte.openBracket: try scanArray(depth: depth)
        case TemplateByte.doubleQuote: try scanString(isKey: false)
        case TemplateByte.minus, 0x30...0x39: try scanNumber()
        case 0x74: try scanKeyword("true")
        case 0x66: try scanKeyword("false")
        case 0x6E: try scanKeyword("null")
        default:
            if TemplateContentParser.firstMarker(in: bytes[index...]) == index {
                throw error(at: index, "an expression must stand inside a JSON string, as in \"$(title)\" or \"#(badge)\"")
            }
            throw error(at: index, "expected a JSON value")
        }
    }

    private mutating func scanObject(depth: Int) throws(TemplateError) {
        try checkDepth(depth)
        index += 1
        skipWhitespace()
        if index < bytes.count && bytes[index] == TemplateByte.closeBrace {
            index += 1
            return
        }
        while true {
            guard index < bytes.count else { throw error(at: index, "unexpected end of the body: expected '}'") }
            guard bytes[index] == TemplateByte.doubleQuote else {
                if TemplateContentParser.isNameByte(bytes[index]) {
                    throw error(at: index, "object keys must be in double quotes, as in {\"aps\": ...}")
                }
                throw error(at: index, "expected a quoted object key")
            }
            try scanString(isKey: true)
            skipWhitespace()
            guard index < bytes.count, bytes[index] == TemplateByte.colon else {
                throw error(at: index, "expected ':' after the object key")
            }
            index += 1
            skipWhitespace()
            try scanValue(depth: depth + 1)
            skipWhitespace()
            guard index < bytes.count else { throw error(at: index, "unexpected end of the body: expected ',' or '}'") }
            if bytes[index] == TemplateByte.comma {
                index += 1
                skipWhitespace()
                continue
            }
            if bytes[index] == TemplateByte.closeBrace {
                index += 1
                return
            }
            throw error(at: index, "expected ',' or '}' in the object")
        }
    }

    private mutating func scanArray(depth: Int) throws(TemplateError) {
        try checkDepth(depth)
        index += 1
        skipWhitespace()
        if index < bytes.count && bytes[index] == TemplateByte.closeBracket {
            index += 1
            return
        }
        while true {
            try scanValue(depth: depth + 1)
            skipWhitespace()
            guard index < bytes.count else { throw error(at: index, "unexpected end of the body: expected ',' or ']'") }
            if bytes[index] == TemplateByte.comma {
                index += 1
                skipWhitespace()
                continue
            }
            if bytes[index] == TemplateByte.closeBracket {
                index += 1
                return
            }
            throw error(at: index, "expected ',' or ']' in the array")
        }
    }

    private mutating func scanNumber() throws(TemplateError) {
        let start = index
        if bytes[index] == TemplateByte.minus { index += 1 }
        guard index < bytes.count, TemplateByte.isDigit(bytes[index]) else {
            throw error(at: start, "invalid number: expected a digit")
        }
        if bytes[index] == 0x30 {
            index += 1
            if index < bytes.count && TemplateByte.isDigit(bytes[index]) {
                throw error(at: start, "invalid number: leading zeros are not allowed")
            }
        } else {
            skipDigits()
        }
        if index < bytes.count && bytes[index] == TemplateByte.dot {
            index += 1
            guard index < bytes.count, TemplateByte.isDigit(bytes[index]) else {
                throw error(at: start, "invalid number: expected a digit after '.'")
            }
            skipDigits()
        }
        if index < bytes.count && (bytes[index] == 0x65 || bytes[index] == 0x45) {
            index += 1
            if index < bytes.count && (bytes[index] == TemplateByte.plus || bytes[index] == TemplateByte.minus) { index += 1 }
            guard index < bytes.count, TemplateByte.isDigit(bytes[index]) else {
                throw error(at: start, "invalid number: expected a digit in the exponent")
            }
            skipDigits()
        }
    }

    private mutating func scanKeyword(_ keyword: StaticString) throws(TemplateError) {
        let count = keyword.utf8CodeUnitCount
        let matches = keyword.withUTF8Buffer { expected in
            index + count <= bytes.count && bytes[index..<(index + count)].elementsEqual(expected)
        }
        guard matches else { throw error(at: index, "expected a JSON value") }
        index += count
    }

    // MARK: Strings

    private mutating func scanString(isKey: Bool) throws(TemplateError) {
        let quote = index
        index += 1
        let contentStart = index
        var decoded: [UInt8]?
        var offsets: [Int] = []
        while true {
            guard index < bytes.count else { throw error(at: quote, "unterminated string: expected a closing '\"'") }
            let byte = bytes[index]
            if byte == TemplateByte.doubleQuote { break }
            if byte < 0x20 {
                throw error(at: index, "a control character must be escaped inside a JSON string")
            }
            if byte == TemplateByte.backslash {
                if decoded == nil {
                    decoded = Array(bytes[contentStart..<index])
                    offsets = Array(contentStart..<index)
                }
                try decodeEscape(into: &decoded!, offsets: &offsets)
                continue
            }
            if decoded != nil {
                decoded!.append(byte)
                offsets.append(index)
            }
            index += 1
        }
        let contentEnd = index
        index += 1

        let text: TemplateText
        if let decoded {
            offsets.append(contentEnd)
            text = TemplateText(bytes: decoded, offsets: offsets)
        } else {
            guard TemplateContentParser.containsMarker(bytes[contentStart..<contentEnd]) else { return }
            text = TemplateText(bytes: Array(bytes[contentStart..<contentEnd]), base: contentStart)
        }

        if isKey {
            if let marker = TemplateContentParser.firstMarker(in: text.bytes) {
                throw source.error(
                    .expressionInKey, at: text.sourceOffset(marker),
                    "expressions may stand in JSON string values, not in object keys"
                )
            }
            return
        }

        var parser = TemplateContentParser(text: text, source: source, limits: limits)
        guard let parts = try parser.parse() else { return }

        output.appendSource(copiedUpTo..<quote)
        copiedUpTo = index
        if parts.count == 1, case .expression(let expression) = parts[0], expression.operation == .number {
            try output.appendSubstitution(expression, escaping: .jsonString)
            return
        }
        for case .expression(let expression) in parts where expression.operation == .number {
            throw source.error(
                .numberNotWholeValue, at: expression.offset,
                "'#(' must be the whole JSON string value, as in \"badge\": \"#(count)\""
            )
        }
        output.appendByte(TemplateByte.doubleQuote)
        try output.append(parts, escaping: .jsonString, literalEscaping: .jsonString)
        output.appendByte(TemplateByte.doubleQuote)
    }

    /// Decodes the escape at `index` (a backslash) into UTF-8.
    private mutating func decodeEscape(into decoded: inout [UInt8], offsets: inout [Int]) throws(TemplateError) {
        let start = index
        guard index + 1 < bytes.count else { throw error(at: start, "unterminated string: expected a closing '\"'") }
        let simple: UInt8?
        switch bytes[index + 1] {
        case TemplateByte.doubleQuote: simple = TemplateByte.doubleQuote
        case TemplateByte.backslash: simple = TemplateByte.backslash
        case TemplateByte.slash: simple = TemplateByte.slash
        case 0x62: simple = 0x08
        case 0x66: simple = 0x0C
        case 0x6E: simple = TemplateByte.newline
        case 0x72: simple = TemplateByte.carriageReturn
        case 0x74: simple = TemplateByte.tab
        case 0x75: simple = nil
        default: throw error(at: start, "invalid escape in a JSON string")
        }
        if let simple {
            decoded.append(simple)
            offsets.append(start)
            index += 2
            return
        }
        index += 2
        var scalar = try readHex4(escapeStart: start)
        if (0xD800...0xDBFF).contains(scalar) {
            guard index + 1 < bytes.count, bytes[index] == TemplateByte.backslash, bytes[index + 1] == 0x75 else {
                throw error(at: start, "unpaired UTF-16 surrogate in a \\u escape")
            }
            index += 2
            let low = try readHex4(escapeStart: index - 2)
            guard (0xDC00...0xDFFF).contains(low) else {
                throw error(at: start, "unpaired UTF-16 surrogate in a \\u escape")
            }
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
        } else if (0xDC00...0xDFFF).contains(scalar) {
            throw error(at: start, "unpaired UTF-16 surrogate in a \\u escape")
        }
        for byte in String(Character(Unicode.Scalar(scalar)!)).utf8 {
            decoded.append(byte)
            offsets.append(start)
        }
    }

    private mutating func readHex4(escapeStart: Int) throws(TemplateError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error(at: escapeStart, "a \\u escape needs four hex digits") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case 0x30...0x39: digit = byte - 0x30
            case 0x41...0x46: digit = byte - 0x41 + 10
            case 0x61...0x66: digit = byte - 0x61 + 10
            default: throw error(at: escapeStart, "a \\u escape needs four hex digits")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    // MARK: Helpers

    private mutating func skipWhitespace() {
        while index < bytes.count && TemplateByte.isSpace(bytes[index]) { index += 1 }
    }

    private mutating func skipDigits() {
        while index < bytes.count && TemplateByte.isDigit(bytes[index]) { index += 1 }
    }

    private func checkDepth(_ depth: Int) throws(TemplateError) {
        if depth > limits.maxNestingDepth {
            throw source.error(.tooDeep, at: index, "nesting deeper than \(limits.maxNestingDepth) levels")
        }
    }

    private func error(at offset: Int, _ message: String) -> TemplateError {
        source.error(.invalidJSON, at: offset, message)
    }
}
