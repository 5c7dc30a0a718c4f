/// Checks that an XML template body is well-formed and splits it into segments.
///
/// Expressions may stand in character data and in attribute values; markup (element and
/// attribute names, comments, CDATA sections, processing instructions) is copied as written.
/// DOCTYPE declarations are refused: push payloads never need them, and they are where
/// entity-expansion attacks live.
struct XMLTemplateScanner {
    private let source: TemplateSource
    private let limits: TemplateLimits
    private var output: TemplateSegmentList
    private var index = 0
    private var copiedUpTo = 0
    /// Open elements: where each name starts and ends in the source.
    private var openElements: [Range<Int>] = []
    private var sawRoot = false

    init(source: TemplateSource, limits: TemplateLimits) {
        self.source = source
        self.limits = limits
        self.output = TemplateSegmentList(source: source, limits: limits)
    }

    private var bytes: [UInt8] { source.bytes }

    mutating func scan() throws(TemplateError) -> TemplateProgram {
        try checkCharacters()
        while index < bytes.count {
            if bytes[index] == TemplateByte.lessThan {
                try scanMarkup()
            } else {
                try scanCharacterData()
            }
        }
        if let open = openElements.last {
            let name = String(decoding: bytes[open], as: UTF8.self)
            throw error(at: open.lowerBound - 1, "element <\(name)> is never closed")
        }
        guard sawRoot else { throw error(at: bytes.count, "expected a root element") }
        output.appendSource(copiedUpTo..<bytes.count)
        return output.finish()
    }

    /// XML 1.0 allows no C0 control other than tab, newline and carriage return, and neither
    /// U+FFFE nor U+FFFF, anywhere in a document.
    private func checkCharacters() throws(TemplateError) {
        for position in bytes.indices {
            let byte = bytes[position]
            if byte < 0x20 && byte != TemplateByte.tab && byte != TemplateByte.newline && byte != TemplateByte.carriageReturn {
                throw error(at: position, "control characters are not allowed in XML")
            }
            if byte == 0xEF && position + 2 < bytes.count && bytes[position + 1] == 0xBF && bytes[position + 2] >= 0xBE {
                throw error(at: position, "U+FFFE and U+FFFF are not allowed in XML")
            }
        }
    }

    // MARK: Markup

    private mutating func scanMarkup() throws(TemplateError) {
        if hasPrefix("<?") {
            try skip(past: "?>", from: index, openerLength: 2, "the processing instruction has no closing '?>'")
        } else if hasPrefix("<!--") {
            let start = index
            try skip(past: "-->", from: index, openerLength: 4, "the comment has no closing '-->'")
            // XML forbids "--" inside a comment (and so "<!--->").
            if firstOccurrence(of: "--", in: (start + 4)..<(index - 3)) != nil || index - 3 < start + 4 {
                throw error(at: start, "a comment may not contain '--'")
            }
        } else if hasPrefix("<![CDATA[") {
            guard !openElements.isEmpty else { throw error(at: index, "a CDATA section must be inside the root element") }
            try skip(past: "]]>", from: index, openerLength: 9, "the CDATA section has no closing ']]>'")
        } else if hasPrefix("<!") {
            throw error(at: index, "DOCTYPE and other declarations are not supported in templates")
        } else if hasPrefix("</") {
            try scanEndTag()
        } else {
            try scanStartTag()
        }
    }

    private mutating func scanStartTag() throws(TemplateError) {
        let tagStart = index
        index += 1
        let name = try scanName(what: "an element name")
        if openElements.isEmpty && sawRoot {
            throw error(at: tagStart, "a document has exactly one root element")
        }
        var attributeNames: [ArraySlice<UInt8>] = []
        while true {
            let hadSpace = skipWhitespace()
            guard index < bytes.count else { throw error(at: tagStart, "the tag has no closing '>'") }
            if bytes[index] == TemplateByte.greaterThan {
                index += 1
                if openElements.count >= limits.maxNestingDepth {
                    throw source.error(.tooDeep, at: tagStart, "nesting deeper than \(limits.maxNestingDepth) levels")
                }
                openElements.append(name)
                sawRoot = true
                return
            }
            if hasPrefix("/>") {
                index += 2
                sawRoot = true
                return
            }
            guard hadSpace else { throw error(at: index, "expected whitespace, '>' or '/>' in the tag") }
            let attributeStart = index
            let attribute = try scanName(what: "an attribute name")
            if attributeNames.contains(where: { $0.elementsEqual(bytes[attribute]) }) {
                throw error(at: attributeStart, "duplicate attribute '\(String(decoding: bytes[attribute], as: UTF8.self))'")
            }
            attributeNames.append(bytes[attribute])
            skipWhitespace()
            guard index < bytes.count, bytes[index] == TemplateByte.equals else {
                throw error(at: index, "expected '=' after the attribute name")
            }
            index += 1
            skipWhitespace()
            try scanAttributeValue()
        }
    }

    private mutating func scanEndTag() throws(TemplateError) {
        let tagStart = index
        index += 2
        let name = try scanName(what: "an element name")
        skipWhitespace()
        guard index < bytes.count, bytes[index] == TemplateByte.greaterThan else {
            throw error(at: index, "expected '>' to end the closing tag")
        }
        index += 1
        guard let open = openElements.popLast() else {
            throw error(at: tagStart, "closing tag without a matching opening tag")
        }
        guard bytes[open].elementsEqual(bytes[name]) else {
            throw error(at: tagStart, "expected </\(String(decoding: bytes[open], as: UTF8.self))>")
        }
    }

    private mutating func scanName(what: String) throws(TemplateError) -> Range<Int> {
        let start = index
        guard index < bytes.count, Self.isNameStart(bytes[index]) else {
            if TemplateContentParser.firstMarker(in: bytes[index...]) == index {
                throw error(at: index, "expressions may stand only in text and attribute values, not in tags")
            }
            throw error(at: index, "expected \(what)")
        }
        index += 1
        while index < bytes.count && Self.isNameByte(bytes[index]) { index += 1 }
        return start..<index
    }

    // MARK: Values

    private mutating func scanAttributeValue() throws(TemplateError) {
        guard index < bytes.count, bytes[index] == TemplateByte.doubleQuote || bytes[index] == TemplateByte.singleQuote else {
            throw error(at: index, "expected a quoted attribute value")
        }
        let quote = bytes[index]
        let openQuote = index
        index += 1
        let start = index
        while index < bytes.count && bytes[index] != quote {
            if bytes[index] == TemplateByte.lessThan { throw error(at: index, "'<' is not allowed in an attribute value") }
            index += 1
        }
        guard index < bytes.count else { throw error(at: openQuote, "the attribute value has no closing quote") }
        try process(start..<index, escaping: .xmlAttribute)
        index += 1
    }

    private mutating func scanCharacterData() throws(TemplateError) {
        let start = index
        while index < bytes.count && bytes[index] != TemplateByte.lessThan { index += 1 }
        if openElements.isEmpty {
            if let stray = bytes[start..<index].firstIndex(where: { !TemplateByte.isSpace($0) }) {
                throw error(at: stray, "text is not allowed outside the root element")
            }
            return
        }
        if let close = firstOccurrence(of: "]]>", in: start..<index) {
            throw error(at: close, "']]>' is not allowed in character data")
        }
        try process(start..<index, escaping: .xmlText)
    }

    /// Decodes entities in a text or attribute value and substitutes its expressions.
    private mutating func process(_ range: Range<Int>, escaping: TemplateEscaping) throws(TemplateError) {
        let hasEntity = bytes[range].contains(TemplateByte.ampersand)
        guard hasEntity || TemplateContentParser.containsMarker(bytes[range]) else { return }
        let text = try decodeEntities(range)
        guard TemplateContentParser.containsMarker(text.bytes) else { return }
        var parser = TemplateContentParser(text: text, source: source, limits: limits)
        guard let parts = try parser.parse() else { return }
        output.appendSource(copiedUpTo..<range.lowerBound)
        copiedUpTo = range.upperBound
        // Outside JSON, #() has nothing to turn into a bare number and reads like $().
        let plain = parts.map { part -> TemplatePart in
            guard case .expression(var expression) = part, expression.operation == .number else { return part }
            expression.operation = .value
            return .expression(expression)
        }
        try output.append(plain, escaping: escaping, literalEscaping: escaping)
    }

    private func decodeEntities(_ range: Range<Int>) throws(TemplateError) -> TemplateText {
        var decoded: [UInt8] = []
        var offsets: [Int] = []
        decoded.reserveCapacity(range.count)
        var position = range.lowerBound
        while position < range.upperBound {
            guard bytes[position] == TemplateByte.ampersand else {
                decoded.append(bytes[position])
                offsets.append(position)
                position += 1
                continue
            }
            let searchEnd = min(range.upperBound, position + 12)
            guard let semicolon = bytes[position..<searchEnd].firstIndex(of: TemplateByte.semicolon) else {
                throw error(at: position, "'&' must start an entity reference such as &amp;")
            }
            let name = String(decoding: bytes[(position + 1)..<semicolon], as: UTF8.self)
            guard let scalar = Self.entityScalar(name) else {
                throw error(at: position, "unknown entity '&\(name);': only &amp; &lt; &gt; &quot; &apos; and character references")
            }
            for byte in String(Character(scalar)).utf8 {
                decoded.append(byte)
                offsets.append(position)
            }
            position = semicolon + 1
        }
        offsets.append(range.upperBound)
        return TemplateText(bytes: decoded, offsets: offsets)
    }

    private static func entityScalar(_ name: String) -> Unicode.Scalar? {
        switch name {
        case "amp": return "&"
        case "lt": return "<"
        case "gt": return ">"
        case "quot": return "\""
        case "apos": return "'"
        default:
            guard name.hasPrefix("#") else { return nil }
            let digits = name.dropFirst()
            let value = digits.hasPrefix("x") ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits, radix: 10)
            guard let value, !digits.isEmpty, let scalar = Unicode.Scalar(value), isXMLCharacter(value) else { return nil }
            return scalar
        }
    }

    private static func isXMLCharacter(_ value: UInt32) -> Bool {
        value == 0x9 || value == 0xA || value == 0xD || (0x20...0xD7FF).contains(value)
            || (0xE000...0xFFFD).contains(value) || (0x10000...0x10FFFF).contains(value)
    }

    // MARK: Helpers

    private static func isNameStart(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x41...0x5A, 0x61...0x7A, TemplateByte.underscore, TemplateByte.colon, 0x80...: true
        default: false
        }
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        isNameStart(byte) || TemplateByte.isDigit(byte) || byte == TemplateByte.minus || byte == TemplateByte.dot
    }

    private func hasPrefix(_ prefix: StaticString) -> Bool {
        prefix.withUTF8Buffer { expected in
            index + expected.count <= bytes.count && bytes[index..<(index + expected.count)].elementsEqual(expected)
        }
    }

    private func firstOccurrence(of needle: StaticString, in range: Range<Int>) -> Int? {
        needle.withUTF8Buffer { expected -> Int? in
            var position = range.lowerBound
            while position + expected.count <= range.upperBound {
                if bytes[position..<(position + expected.count)].elementsEqual(expected) { return position }
                position += 1
            }
            return nil
        }
    }

    /// Moves past `terminator`, searching only after the whole opener so that `<!-->` does
    /// not count as a closed comment.
    private mutating func skip(past terminator: StaticString, from start: Int, openerLength: Int, _ message: String) throws(TemplateError) {
        guard let found = firstOccurrence(of: terminator, in: (start + openerLength)..<bytes.count) else {
            throw error(at: start, message)
        }
        index = found + terminator.utf8CodeUnitCount
    }

    @discardableResult
    private mutating func skipWhitespace() -> Bool {
        let start = index
        while index < bytes.count && TemplateByte.isSpace(bytes[index]) { index += 1 }
        return index > start
    }

    private func error(at offset: Int, _ message: String) -> TemplateError {
        source.error(.invalidXML, at: offset, message)
    }
}
