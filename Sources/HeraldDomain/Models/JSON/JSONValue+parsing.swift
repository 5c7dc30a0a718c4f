extension JSONValue {
    /// The deepest nesting of arrays and objects `parse` accepts; deeper input is refused
    /// rather than risking the stack on hostile documents.
    public static let defaultMaximumDepth = 64

    /// Parses a complete JSON document (RFC 8259; leading and trailing whitespace allowed).
    public static func parse(_ bytes: some Collection<UInt8>, maximumDepth: Int = defaultMaximumDepth) throws(JSONSyntaxError) -> JSONValue
    {
        let contiguous = Array(bytes)
        return try contiguous.withUnsafeBufferPointer { (buffer) throws(JSONSyntaxError) -> JSONValue in
            var parser = JSONParser(bytes: buffer, maximumDepth: maximumDepth)
            return try parser.parseDocument()
        }
    }

    /// Parses JSON text.
    public static func parse(_ text: String, maximumDepth: Int = defaultMaximumDepth) throws(JSONSyntaxError) -> JSONValue {
        try parse(Array(text.utf8), maximumDepth: maximumDepth)
    }
}

/// A recursive-descent reader over UTF-8 bytes, one method per grammar rule.
struct JSONParser {
    let bytes: UnsafeBufferPointer<UInt8>
    let maximumDepth: Int
    var index = 0
    var depth = 0

    init(bytes: UnsafeBufferPointer<UInt8>, maximumDepth: Int) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
    }

    mutating func parseDocument() throws(JSONSyntaxError) -> JSONValue {
        skipWhitespace()
        let value = try parseValue()
        skipWhitespace()
        if index < bytes.count {
            throw error("trailing_content", "unexpected \(describe(bytes[index])) after the end of the document")
        }
        return value
    }

    mutating func parseValue() throws(JSONSyntaxError) -> JSONValue {
        guard index < bytes.count else { throw error("unexpected_end", "expected a value but the input ended") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"):
            try parseLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try parseLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try parseLiteral("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw error("unexpected_character", "expected a value, found \(describe(bytes[index]))")
        }
    }

    mutating func parseObject() throws(JSONSyntaxError) -> JSONValue {
        try enterNesting()
        index += 1
        var members: [JSONMember] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected_end", "expected a member name but the input ended") }
            guard bytes[index] == UInt8(ascii: "\"") else {
                throw error("unexpected_character", "expected a member name in double quotes, found \(describe(bytes[index]))")
            }
            let key = try parseString()
            skipWhitespace()
            try expect(UInt8(ascii: ":"), "':' after the member name")
            skipWhitespace()
            let value = try parseValue()
            members.append(JSONMember(key: key, value: value))
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected_end", "expected ',' or '}' but the input ended") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            try expect(UInt8(ascii: "}"), "',' or '}'")
            depth -= 1
            return .object(members)
        }
    }

    mutating func parseArray() throws(JSONSyntaxError) -> JSONValue {
        try enterNesting()
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            depth -= 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue())
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected_end", "expected ',' or ']' but the input ended") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            try expect(UInt8(ascii: "]"), "',' or ']'")
            depth -= 1
            return .array(elements)
        }
    }

    mutating func parseString() throws(JSONSyntaxError) -> String {
        let start = index
        index += 1
        let contentStart = index
        // Fast path: no escapes, so the content is a slice of the input.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[contentStart..<index])
                index += 1
                return try validatedString(slice, start: contentStart)
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw error("invalid_string", "control character \(describe(byte)) inside a string; escape it") }
            index += 1
        }
        var content = Array(UnsafeBufferPointer(rebasing: bytes[contentStart..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return try content.withUnsafeBufferPointer { (buffer) throws(JSONSyntaxError) -> String in
                    try validatedString(buffer, start: contentStart)
                }
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else { break }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): content.append(UInt8(ascii: "\""))
                case UInt8(ascii: "\\"): content.append(UInt8(ascii: "\\"))
                case UInt8(ascii: "/"): content.append(UInt8(ascii: "/"))
                case UInt8(ascii: "b"): content.append(0x08)
                case UInt8(ascii: "f"): content.append(0x0C)
                case UInt8(ascii: "n"): content.append(0x0A)
                case UInt8(ascii: "r"): content.append(0x0D)
                case UInt8(ascii: "t"): content.append(0x09)
                case UInt8(ascii: "u"):
                    let scalar = try parseUnicodeEscape()
                    content.append(contentsOf: Array(String(Character(scalar)).utf8))
                default:
                    index -= 1
                    throw error("invalid_string", "unknown escape '\\\(Character(Unicode.Scalar(escape)))'")
                }
            default:
                if byte < 0x20 { throw error("invalid_string", "control character \(describe(byte)) inside a string; escape it") }
                content.append(byte)
                index += 1
            }
        }
        index = start
        throw error("unexpected_end", "string is not closed")
    }

    /// Reads the hex digits after `\u`, combining a surrogate pair into one scalar.
    mutating func parseUnicodeEscape() throws(JSONSyntaxError) -> Unicode.Scalar {
        let high = try parseHex4()
        if (0xD800..<0xDC00).contains(high) {
            guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                throw error("invalid_string", "unpaired surrogate \\u\(String(high, radix: 16, uppercase: true))")
            }
            index += 2
            let low = try parseHex4()
            guard (0xDC00..<0xE000).contains(low) else {
                throw error("invalid_string", "unpaired surrogate \\u\(String(high, radix: 16, uppercase: true))")
            }
            return Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))!
        }
        guard let scalar = Unicode.Scalar(high) else {
            throw error("invalid_string", "unpaired surrogate \\u\(String(high, radix: 16, uppercase: true))")
        }
        return scalar
    }

    mutating func parseHex4() throws(JSONSyntaxError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard index < bytes.count else { throw error("unexpected_end", "\\u escape needs four hex digits") }
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw error("invalid_string", "\\u escape needs four hex digits, found \(describe(byte))")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    mutating func parseNumber() throws(JSONSyntaxError) -> String {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else {
            throw error("invalid_number", "expected a digit after '-'")
        }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count, isDigit(bytes[index]) {
                throw error("invalid_number", "a number cannot have a leading zero")
            }
        } else {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else {
                throw error("invalid_number", "expected a digit after the decimal point")
            }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else {
                throw error("invalid_number", "expected a digit in the exponent")
            }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
    }

    mutating func parseLiteral(_ literal: StaticString) throws(JSONSyntaxError) {
        let expected = UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount)
        for byte in expected {
            guard index < bytes.count, bytes[index] == byte else {
                throw error("unexpected_character", "expected '\(literal)'")
            }
            index += 1
        }
    }

    // MARK: Small pieces

    func validatedString(_ content: UnsafeBufferPointer<UInt8>, start: Int) throws(JSONSyntaxError) -> String {
        if let string = String(validating: content, as: UTF8.self) { return string }
        var probe = JSONParser(bytes: bytes, maximumDepth: maximumDepth)
        probe.index = start
        throw probe.error("invalid_utf8", "string is not valid UTF-8")
    }

    mutating func enterNesting() throws(JSONSyntaxError) {
        depth += 1
        if depth > maximumDepth {
            throw error("too_deep", "arrays and objects are nested more than \(maximumDepth) deep")
        }
    }

    mutating func expect(_ byte: UInt8, _ what: String) throws(JSONSyntaxError) {
        guard index < bytes.count else { throw error("unexpected_end", "expected \(what) but the input ended") }
        guard bytes[index] == byte else { throw error("unexpected_character", "expected \(what), found \(describe(bytes[index]))") }
        index += 1
    }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"): index += 1
            default: return
            }
        }
    }

    func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    func describe(_ byte: UInt8) -> String {
        if byte >= 0x20 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        return "byte 0x\(String(byte, radix: 16, uppercase: true))"
    }

    func error(_ code: String, _ message: String) -> JSONSyntaxError {
        var line = 1
        var lineStart = 0
        let end = min(index, bytes.count)
        for position in 0..<end where bytes[position] == UInt8(ascii: "\n") {
            line += 1
            lineStart = position + 1
        }
        return JSONSyntaxError(code: code, offset: end, line: line, column: end - lineStart + 1, message: message)
    }
}

/// Why a byte sequence is not JSON, and where: `offset` counts bytes from 0, `line` and
/// `column` count from 1 (columns in bytes, which is what editors show for ASCII JSON).
public struct JSONSyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Stable code, one of `unexpected_end`, `unexpected_character`, `invalid_string`,
    /// `invalid_number`, `invalid_utf8`, `too_deep`, `trailing_content`.
    public var code: String
    public var offset: Int
    public var line: Int
    public var column: Int
    public var message: String

    public var description: String {
        "\(message) at line \(line), column \(column)"
    }
}
