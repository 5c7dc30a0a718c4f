/// Why a tag expression was rejected, and where.
///
/// `description` reads like `expected tag or '(' at column 11: "(World || "`. The column is
/// 1-based and counts Characters; an error at the end of the input points one column past the
/// last character, where the missing token should have been.
public struct TagExpressionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable, machine-readable reason. A struct rather than an enum so that codes can be
    /// added without breaking exhaustive switches in other modules.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        private init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The expression is empty or only whitespace.
        public static let empty = Code("empty")
        /// The input ended where a tag or '(' was required (`a &&`, `!`).
        public static let unexpectedEnd = Code("unexpectedEnd")
        /// A character that cannot start any token (`&` alone, `,`, `"`, non-ASCII letters).
        public static let unexpectedCharacter = Code("unexpectedCharacter")
        /// An operator or ')' stood where a tag or '(' was required (`a && || b`, `()`).
        public static let expectedTag = Code("expectedTag")
        /// Two operands without an operator between them (`a b`, `a (b)`, `a !b`).
        public static let expectedOperator = Code("expectedOperator")
        /// The input ended inside parentheses (`(a || b`).
        public static let expectedClosingParen = Code("expectedClosingParen")
        /// A ')' without a matching '(' (`a || b)`).
        public static let unmatchedClosingParen = Code("unmatchedClosingParen")
        /// Parentheses and '!' nested deeper than `TagExpressionLimits.maxDepth`.
        public static let tooDeep = Code("tooDeep")
        /// The expression is longer than `TagExpressionLimits.maxLength`.
        public static let tooLong = Code("tooLong")
        /// More tags than the limits allow.
        public static let tooManyTags = Code("tooManyTags")
        /// One tag is longer than `TagExpressionLimits.maxTagLength`.
        public static let tagTooLong = Code("tagTooLong")
        /// A malformed system tag (`$Foo`, `$UserId:{}`, `$UserId:{a b}`).
        public static let invalidTag = Code("invalidTag")
    }

    public var code: Code
    /// 1-based, counted in Characters.
    public var column: Int
    /// The whole expression as given.
    public var input: String
    /// What was wrong, without the position (`description` adds it).
    public var message: String

    public init(code: Code, column: Int, input: String, message: String) {
        self.code = code
        self.column = column
        self.input = input
        self.message = message
    }

    init(code: Code, byteOffset: Int, in bytes: [UInt8], input: String, message: String) {
        self.init(
            code: code,
            column: TextPosition.column(ofByteOffset: byteOffset, in: bytes),
            input: input,
            message: message
        )
    }

    public var description: String {
        "\(message) at column \(column): \"\(excerpt)\""
    }

    /// Spaces then `^` under `column`, for printing below the input (the CLI does this).
    public var caret: String {
        String(repeating: " ", count: max(0, column - 1)) + "^"
    }

    /// Long inputs are cut to a window around the column so that logs and DLQ reasons stay short.
    private var excerpt: String {
        let window = 40
        let characters = Array(input)
        guard characters.count > 2 * window + 20 else { return input }
        let center = min(max(column - 1, 0), characters.count)
        let lower = max(0, center - window)
        let upper = min(characters.count, center + window)
        return (lower > 0 ? "…" : "") + String(characters[lower..<upper]) + (upper < characters.count ? "…" : "")
    }
}

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
