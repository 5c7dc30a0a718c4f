/// Splits an expression into tokens. Works on UTF-8 bytes: every valid token is ASCII, so
/// anything else is reported as an unexpected character without decoding the whole input.
struct TagExpressionLexer {
    enum Kind: Equatable {
        case tag(String)
        case not, and, or, open, close, end
    }

    struct Token: Equatable {
        var kind: Kind
        /// Byte offset of the token's first byte (`bytes.count` for `.end`).
        var offset: Int

        /// How the token reads in a "but found ..." message.
        var quoted: String {
            switch kind {
            case .tag(let tag): "tag '\(tag)'"
            case .not: "'!'"
            case .and: "'&&'"
            case .or: "'||'"
            case .open: "'('"
            case .close: "')'"
            case .end: "end of input"
            }
        }
    }

    let bytes: [UInt8]
    let input: String
    let maxTagLength: Int
    private(set) var position = 0

    init(input: String, bytes: [UInt8], maxTagLength: Int) {
        self.input = input
        self.bytes = bytes
        self.maxTagLength = maxTagLength
    }

    mutating func next() throws(TagExpressionError) -> Token {
        while position < bytes.count, Self.isWhitespace(bytes[position]) { position += 1 }
        let start = position
        guard start < bytes.count else { return Token(kind: .end, offset: start) }
        let byte = bytes[start]
        switch byte {
        case UInt8(ascii: "!"):
            position += 1
            return Token(kind: .not, offset: start)
        case UInt8(ascii: "("):
            position += 1
            return Token(kind: .open, offset: start)
        case UInt8(ascii: ")"):
            position += 1
            return Token(kind: .close, offset: start)
        case UInt8(ascii: "&"), UInt8(ascii: "|"):
            guard start + 1 < bytes.count, bytes[start + 1] == byte else {
                let doubled = byte == UInt8(ascii: "&") ? "'&&' for AND" : "'||' for OR"
                throw error(.unexpectedCharacter, at: start, "unexpected character '\(Character(Unicode.Scalar(byte)))'; use \(doubled)")
            }
            position += 2
            return Token(kind: byte == UInt8(ascii: "&") ? .and : .or, offset: start)
        case TagAlphabet.dollar:
            switch TagAlphabet.scanSystemTag(bytes, from: start) {
            case .problem(let offset, let message):
                throw error(.invalidTag, at: offset, message)
            case .tag(let end):
                position = end
                return try tag(from: start)
            }
        default:
            guard TagAlphabet.isTagByte(byte) else {
                let character = TextPosition.describeCharacter(atByteOffset: start, in: bytes)
                throw error(.unexpectedCharacter, at: start, "unexpected character \(character)")
            }
            while position < bytes.count, TagAlphabet.isTagByte(bytes[position]) { position += 1 }
            return try tag(from: start)
        }
    }

    private func tag(from start: Int) throws(TagExpressionError) -> Token {
        let length = position - start
        if length > maxTagLength {
            throw error(.tagTooLong, at: start, "tag is \(length) characters long; at most \(maxTagLength) are allowed")
        }
        return Token(kind: .tag(String(decoding: bytes[start..<position], as: UTF8.self)), offset: start)
    }

    func error(_ code: TagExpressionError.Code, at offset: Int, _ message: String) -> TagExpressionError {
        TagExpressionError(code: code, byteOffset: offset, in: bytes, input: input, message: message)
    }

    @inline(__always)
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\n")
            || byte == UInt8(ascii: "\r")
    }
}
