// A small XML 1.0 well-formedness check for the template fuzzer's oracle, independent of the
// template compiler's XML scanner. It is deliberately simpler than a full parser (no DOCTYPE
// internal subset, approximate name classes), so the fuzzer uses it differentially: when a
// template rendered with harmless values passes, every other rendering must pass too.

/// Checks elements, attributes, references, comments, CDATA sections and processing
/// instructions, and that every character is one XML 1.0 allows.
struct XMLWellFormednessChecker {
    private let bytes: [UInt8]
    private var index = 0
    private var openElements: [ArraySlice<UInt8>] = []

    /// The problem and its byte offset, or `nil` when `text` is a well-formed document.
    static func problem(in text: String) -> String? {
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x09, 0x0A, 0x0D, 0x20...0xD7FF, 0xE000...0xFFFD, 0x10000...0x10FFFF: continue
            default: return "character U+\(String(scalar.value, radix: 16, uppercase: true)) is not allowed in XML"
            }
        }
        var checker = XMLWellFormednessChecker(bytes: Array(text.utf8))
        return checker.check()
    }

    private init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    private func problem(_ what: String) -> String {
        "\(what) at byte \(index)"
    }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private func hasPrefix(_ prefix: String) -> Bool {
        let prefix = Array(prefix.utf8)
        guard bytes.count - index >= prefix.count else { return false }
        return bytes[index..<(index + prefix.count)].elementsEqual(prefix)
    }

    private mutating func check() -> String? {
        var sawRoot = false
        while index < bytes.count {
            if openElements.isEmpty {
                // Outside the root only markup and whitespace may appear.
                if Self.isSpace(bytes[index]) {
                    index += 1
                    continue
                }
                guard bytes[index] == UInt8(ascii: "<") else { return problem("text outside the root element") }
                if hasPrefix("<?") {
                    if let problem = skip(past: "?>") { return problem }
                } else if hasPrefix("<!--") {
                    if let problem = comment() { return problem }
                } else if hasPrefix("<!") {
                    return problem("DOCTYPE and other declarations are not supported by this checker")
                } else if hasPrefix("</") {
                    return problem("end tag without a start tag")
                } else {
                    if sawRoot { return problem("a second root element") }
                    sawRoot = true
                    if let problem = startTag() { return problem }
                }
                continue
            }
            switch bytes[index] {
            case UInt8(ascii: "<"):
                if hasPrefix("<!--") {
                    if let problem = comment() { return problem }
                } else if hasPrefix("<![CDATA[") {
                    if let problem = skip(past: "]]>") { return problem }
                } else if hasPrefix("<?") {
                    if let problem = skip(past: "?>") { return problem }
                } else if hasPrefix("</") {
                    if let problem = endTag() { return problem }
                } else if hasPrefix("<!") {
                    return problem("declaration inside the root element")
                } else {
                    if let problem = startTag() { return problem }
                }
            case UInt8(ascii: "&"):
                if let problem = reference() { return problem }
            case UInt8(ascii: "]") where hasPrefix("]]>"):
                return problem("']]>' in character data")
            default:
                index += 1
            }
        }
        if !sawRoot { return problem("no root element") }
        if !openElements.isEmpty { return problem("\(openElements.count) element(s) not closed") }
        return nil
    }

    private mutating func startTag() -> String? {
        index += 1
        guard let name = name() else { return problem("expected an element name") }
        var attributeNames: Set<ArraySlice<UInt8>> = []
        while true {
            let hadSpace = skipSpace()
            switch current {
            case UInt8(ascii: ">"):
                index += 1
                openElements.append(name)
                return nil
            case UInt8(ascii: "/"):
                index += 1
                guard current == UInt8(ascii: ">") else { return problem("expected '>' after '/'") }
                index += 1
                return nil
            case nil:
                return problem("end of input in a start tag")
            default:
                guard hadSpace else { return problem("expected whitespace before an attribute") }
                guard let attribute = self.name() else { return problem("expected an attribute name") }
                guard attributeNames.insert(attribute).inserted else { return problem("repeated attribute") }
                skipSpace()
                guard current == UInt8(ascii: "=") else { return problem("expected '='") }
                index += 1
                skipSpace()
                guard let quote = current, quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") else {
                    return problem("expected a quoted attribute value")
                }
                index += 1
                while true {
                    guard let byte = current else { return problem("unterminated attribute value") }
                    if byte == quote {
                        index += 1
                        break
                    }
                    if byte == UInt8(ascii: "<") { return problem("'<' in an attribute value") }
                    if byte == UInt8(ascii: "&") {
                        if let problem = reference() { return problem }
                    } else {
                        index += 1
                    }
                }
            }
        }
    }

    private mutating func endTag() -> String? {
        index += 2
        guard let name = name() else { return problem("expected an element name in the end tag") }
        skipSpace()
        guard current == UInt8(ascii: ">") else { return problem("expected '>' in the end tag") }
        index += 1
        guard let open = openElements.popLast(), open.elementsEqual(name) else { return problem("mismatched end tag") }
        return nil
    }

    private mutating func reference() -> String? {
        index += 1
        if current == UInt8(ascii: "#") {
            index += 1
            var hex = false
            if current == UInt8(ascii: "x") {
                hex = true
                index += 1
            }
            var value: UInt32 = 0
            var digits = 0
            while let byte = current, byte != UInt8(ascii: ";") {
                guard let digit = Self.digitValue(byte, hex: hex) else { return problem("bad character reference") }
                value = value &* (hex ? 16 : 10) &+ digit
                digits += 1
                guard digits <= 8 else { return problem("character reference too long") }
                index += 1
            }
            guard current == UInt8(ascii: ";"), digits > 0 else { return problem("unterminated character reference") }
            index += 1
            switch value {
            case 0x09, 0x0A, 0x0D, 0x20...0xD7FF, 0xE000...0xFFFD, 0x10000...0x10FFFF: return nil
            default: return problem("character reference to a character XML does not allow")
            }
        }
        guard let name = name() else { return problem("'&' that does not begin a reference") }
        guard current == UInt8(ascii: ";") else { return problem("unterminated entity reference") }
        index += 1
        let predefined = ["amp", "lt", "gt", "quot", "apos"].map { Array($0.utf8) }
        guard predefined.contains(where: { $0.elementsEqual(name) }) else { return problem("undeclared entity") }
        return nil
    }

    private mutating func comment() -> String? {
        index += 4
        while index < bytes.count {
            if hasPrefix("--") {
                guard hasPrefix("-->") else { return problem("'--' inside a comment") }
                index += 3
                return nil
            }
            index += 1
        }
        return problem("unterminated comment")
    }

    private mutating func skip(past terminator: String) -> String? {
        while index < bytes.count {
            if hasPrefix(terminator) {
                index += terminator.utf8.count
                return nil
            }
            index += 1
        }
        return problem("missing '\(terminator)'")
    }

    private mutating func name() -> ArraySlice<UInt8>? {
        let start = index
        guard let first = current, Self.isNameStart(first) else { return nil }
        index += 1
        while let byte = current, Self.isNameStart(byte) || Self.isDigit(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") {
            index += 1
        }
        return bytes[start..<index]
    }

    @discardableResult
    private mutating func skipSpace() -> Bool {
        let start = index
        while let byte = current, Self.isSpace(byte) { index += 1 }
        return index > start
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    /// ASCII letters, '_' and ':', and any non-ASCII byte (an approximation of NameStartChar).
    private static func isNameStart(_ byte: UInt8) -> Bool {
        (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
            || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ":") || byte >= 0x80
    }

    private static func digitValue(_ byte: UInt8, hex: Bool) -> UInt32? {
        if isDigit(byte) { return UInt32(byte - UInt8(ascii: "0")) }
        if hex, (byte | 0x20) >= UInt8(ascii: "a"), (byte | 0x20) <= UInt8(ascii: "f") {
            return UInt32((byte | 0x20) - UInt8(ascii: "a") + 10)
        }
        return nil
    }
}
