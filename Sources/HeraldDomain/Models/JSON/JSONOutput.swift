/// Byte-level JSON writing shared by the hand-written encoders (delivery records, compact
/// native payloads). Kept free of Foundation so it can run per delivery.
enum JSONOutput {
    /// Appends `string` as a quoted JSON string. Only `"`, `\` and control characters are
    /// escaped; everything else, including non-ASCII, is copied as UTF-8, which JSON allows
    /// and which keeps payloads small.
    @inline(__always)
    static func appendString(_ string: String, to bytes: inout [UInt8]) {
        var string = string
        string.withUTF8 { appendString(utf8: $0, to: &bytes) }
    }

    static func appendString(utf8 source: UnsafeBufferPointer<UInt8>, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        appendEscaped(utf8: source, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    /// Appends the escaped content of `string` without the surrounding quotes.
    @inline(__always)
    static func appendEscaped(_ string: String, to bytes: inout [UInt8]) {
        var string = string
        string.withUTF8 { appendEscaped(utf8: $0, to: &bytes) }
    }

    static func appendEscaped(utf8 source: UnsafeBufferPointer<UInt8>, to bytes: inout [UInt8]) {
        var runStart = 0
        for position in cleanPrefixLength(source)..<source.count {
            let byte = source[position]
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
            if runStart < position {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: source[runStart..<position]))
            }
            runStart = position + 1
            bytes.append(UInt8(ascii: "\\"))
            switch byte {
            case UInt8(ascii: "\""): bytes.append(UInt8(ascii: "\""))
            case UInt8(ascii: "\\"): bytes.append(UInt8(ascii: "\\"))
            case 0x0A: bytes.append(UInt8(ascii: "n"))
            case 0x0D: bytes.append(UInt8(ascii: "r"))
            case 0x09: bytes.append(UInt8(ascii: "t"))
            case 0x08: bytes.append(UInt8(ascii: "b"))
            case 0x0C: bytes.append(UInt8(ascii: "f"))
            default:
                bytes.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                bytes.append(hexDigit(byte >> 4))
                bytes.append(hexDigit(byte & 0x0F))
            }
        }
        if runStart < source.count {
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: source[runStart..<source.count]))
        }
    }

    /// How many leading bytes need no escaping, found eight at a time and rounded down to a
    /// multiple of eight (the caller checks the rest byte by byte). Ids, handles and most
    /// payload text have nothing to escape, so this is usually all of them but the tail.
    @inline(__always)
    static func cleanPrefixLength(_ source: UnsafeBufferPointer<UInt8>) -> Int {
        guard let base = source.baseAddress else { return 0 }
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        var position = 0
        while position + 8 <= source.count {
            let word = UnsafeRawPointer(base + position).loadUnaligned(as: UInt64.self)
            // A byte below 0x20, a quote (0x22) or a backslash (0x5C) in the word: the
            // classic "has a zero byte" test on the word itself (shifted) and on its
            // differences from the two characters. Exact for "any", which is all we ask.
            let control = (word &- ones &* 0x20) & ~word & highs
            let quote = word ^ (ones &* 0x22)
            let backslash = word ^ (ones &* 0x5C)
            let special = control | ((quote &- ones) & ~quote & highs) | ((backslash &- ones) & ~backslash & highs)
            if special != 0 { break }
            position += 8
        }
        return position
    }

    @inline(__always)
    static func appendInteger(_ value: some BinaryInteger, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: String(value).utf8)
    }

    @inline(__always)
    static func appendRaw(_ literal: StaticString, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    @inline(__always)
    static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }
}

/// JSON string escaping for encoders outside this module that write records byte by byte
/// (the fan-out's delivery writer), so every writer escapes exactly as `DeliveryRecord` does.
public enum JSONEscaping {
    /// Appends the escaped content of `source` (UTF-8, without surrounding quotes).
    public static func append(_ source: UnsafeBufferPointer<UInt8>, to bytes: inout [UInt8]) {
        JSONOutput.appendEscaped(utf8: source, to: &bytes)
    }
}

extension JSONValue {
    /// Appends this value as compact JSON (no whitespace). With `sortingKeys`, object
    /// members are written in code-point order of their keys, which gives one canonical
    /// text for documents that differ only in member order; otherwise document order.
    public func write(into bytes: inout [UInt8], sortingKeys: Bool = false) {
        switch self {
        case .null: JSONOutput.appendRaw("null", to: &bytes)
        case .bool(let value): value ? JSONOutput.appendRaw("true", to: &bytes) : JSONOutput.appendRaw("false", to: &bytes)
        case .number(let text): bytes.append(contentsOf: text.utf8)
        case .string(let text): JSONOutput.appendString(text, to: &bytes)
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            for (position, element) in elements.enumerated() {
                if position > 0 { bytes.append(UInt8(ascii: ",")) }
                element.write(into: &bytes, sortingKeys: sortingKeys)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            bytes.append(UInt8(ascii: "{"))
            let ordered = sortingKeys ? members.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) } : members
            for (position, member) in ordered.enumerated() {
                if position > 0 { bytes.append(UInt8(ascii: ",")) }
                JSONOutput.appendString(member.key, to: &bytes)
                bytes.append(UInt8(ascii: ":"))
                member.value.write(into: &bytes, sortingKeys: sortingKeys)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    /// This value as compact JSON text.
    public func compactText(sortingKeys: Bool = false) -> String {
        var bytes: [UInt8] = []
        write(into: &bytes, sortingKeys: sortingKeys)
        return String(decoding: bytes, as: UTF8.self)
    }
}
