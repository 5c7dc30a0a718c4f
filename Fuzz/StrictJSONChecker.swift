// An independent RFC 8259 syntax check for the template fuzzer's oracle. It shares no code
// with the template compiler's JSON scanner, so a bug in one is not hidden by the same bug in
// the other.

/// Checks that bytes are exactly one JSON value (RFC 8259), with nothing after it.
struct StrictJSONChecker {
    private let bytes: [UInt8]
    private var index = 0

    /// The problem and its byte offset, or `nil` when `text` is valid JSON.
    static func problem(in text: String) -> String? {
        var checker = StrictJSONChecker(bytes: Array(text.utf8))
        return checker.check()
    }

    private init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    private mutating func check() -> String? {
        skipWhitespace()
        if let problem = value(depth: 0) { return problem }
        skipWhitespace()
        return index == bytes.count ? nil : problem("text after the value")
    }

    private func problem(_ what: String) -> String {
        "\(what) at byte \(index)"
    }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
    }

    private mutating func value(depth: Int) -> String? {
        // Far beyond any template's nesting limit; only guards this checker's own stack.
        guard depth < 10_000 else { return problem("nesting too deep for the checker") }
        guard let byte = current else { return problem("end of input where a value was expected") }
        switch byte {
        case UInt8(ascii: "{"): return object(depth: depth)
        case UInt8(ascii: "["): return array(depth: depth)
        case UInt8(ascii: "\""): return string()
        case UInt8(ascii: "t"): return literal("true")
        case UInt8(ascii: "f"): return literal("false")
        case UInt8(ascii: "n"): return literal("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number()
        default: return problem("unexpected byte \(byte) where a value was expected")
        }
    }

    private mutating func object(depth: Int) -> String? {
        index += 1
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            index += 1
            return nil
        }
        while true {
            guard current == UInt8(ascii: "\"") else { return problem("expected a key") }
            if let problem = string() { return problem }
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { return problem("expected ':'") }
            index += 1
            skipWhitespace()
            if let problem = value(depth: depth + 1) { return problem }
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","):
                index += 1
                skipWhitespace()
            case UInt8(ascii: "}"):
                index += 1
                return nil
            default:
                return problem("expected ',' or '}'")
            }
        }
    }

    private mutating func array(depth: Int) -> String? {
        index += 1
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            index += 1
            return nil
        }
        while true {
            if let problem = value(depth: depth + 1) { return problem }
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","):
                index += 1
                skipWhitespace()
            case UInt8(ascii: "]"):
                index += 1
                return nil
            default:
                return problem("expected ',' or ']'")
            }
        }
    }

    private mutating func string() -> String? {
        index += 1
        while let byte = current {
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return nil
            case UInt8(ascii: "\\"):
                index += 1
                guard let escaped = current else { return problem("end of input in an escape") }
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
                    UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    index += 1
                case UInt8(ascii: "u"):
                    index += 1
                    for _ in 0..<4 {
                        guard let hex = current, Self.isHexDigit(hex) else { return problem("bad \\u escape") }
                        index += 1
                    }
                default:
                    return problem("bad escape \\\(Character(Unicode.Scalar(escaped)))")
                }
            case 0x00..<0x20:
                return problem("raw control character \(byte) in a string")
            default:
                index += 1
            }
        }
        return problem("unterminated string")
    }

    private mutating func number() -> String? {
        if current == UInt8(ascii: "-") { index += 1 }
        guard let first = current, Self.isDigit(first) else { return problem("expected a digit") }
        index += 1
        if first != UInt8(ascii: "0") {
            while let byte = current, Self.isDigit(byte) { index += 1 }
        }
        if current == UInt8(ascii: ".") {
            index += 1
            guard let byte = current, Self.isDigit(byte) else { return problem("expected a digit after '.'") }
            while let byte = current, Self.isDigit(byte) { index += 1 }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard let byte = current, Self.isDigit(byte) else { return problem("expected an exponent digit") }
            while let byte = current, Self.isDigit(byte) { index += 1 }
        }
        return nil
    }

    private mutating func literal(_ word: String) -> String? {
        for expected in word.utf8 {
            guard current == expected else { return problem("bad literal, expected \(word)") }
            index += 1
        }
        return nil
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        isDigit(byte) || ((byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "f"))
    }
}
