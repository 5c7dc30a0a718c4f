/// Turns byte offsets into the 1-based character columns that people see. Parsing works on
/// UTF-8 bytes; columns are only computed when an error is reported.
enum TextPosition {
    /// The 1-based column (counted in Characters) of the byte at `offset`; `bytes.count` gives
    /// the column just past the end.
    static func column(ofByteOffset offset: Int, in bytes: [UInt8]) -> Int {
        String(decoding: bytes[0..<min(offset, bytes.count)], as: UTF8.self).count + 1
    }

    /// The character at `offset` quoted for a message: `'&'`, or `U+00A0` for invisible ones.
    static func describeCharacter(atByteOffset offset: Int, in bytes: [UInt8]) -> String {
        let tail = String(decoding: bytes[offset...].prefix(16), as: UTF8.self)
        guard let scalar = tail.unicodeScalars.first else { return "end of input" }
        if scalar.properties.isWhitespace || scalar.properties.generalCategory == .control
            || scalar.properties.generalCategory == .format
        {
            let hex = String(scalar.value, radix: 16, uppercase: true)
            return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        }
        return "'\(tail.first.map(String.init) ?? String(scalar))'"
    }
}
