/// A template that cannot be compiled: what is wrong, where (line, column and byte offset
/// into the body) and the text around that place.
public struct TemplateError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable, machine-readable reason. A struct rather than an enum so codes can be added
    /// without breaking callers that switch over them.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// `$(`, `.(`, `%(` or `#(` without its closing `)`, or a default without its `}`.
        public static let unclosedExpression = Code("unclosedExpression")
        /// Something other than `)`, `,` or `:` after a property name.
        public static let invalidExpression = Code("invalidExpression")
        /// A clip length that is missing, not a positive integer, or above the limit.
        public static let invalidLength = Code("invalidLength")
        /// `#()` used as a term of a `{ a + b }` composite.
        public static let numberInComposite = Code("numberInComposite")
        /// `#()` inside a longer JSON string: it can only stand for a whole JSON value.
        public static let numberNotWholeValue = Code("numberNotWholeValue")
        /// A malformed `{ a + b }` composite.
        public static let invalidComposite = Code("invalidComposite")
        /// A value that starts a composite with `{` but does not end it with `}`.
        public static let unclosedComposite = Code("unclosedComposite")
        /// A quoted literal in a composite without its closing quote.
        public static let unterminatedLiteral = Code("unterminatedLiteral")
        /// A property name that is empty, too long, or uses characters outside `[A-Za-z0-9_]`.
        public static let invalidPropertyName = Code("invalidPropertyName")
        /// A JSON body that is not valid JSON.
        public static let invalidJSON = Code("invalidJSON")
        /// An XML body that is not well-formed.
        public static let invalidXML = Code("invalidXML")
        /// An expression in a JSON object key, where it could produce duplicate or invalid keys.
        public static let expressionInKey = Code("expressionInKey")
        /// A body larger than `TemplateLimits.maxBodyBytes`.
        public static let tooLarge = Code("tooLarge")
        /// Nesting deeper than `TemplateLimits.maxNestingDepth`.
        public static let tooDeep = Code("tooDeep")
        /// More expressions than `TemplateLimits.maxExpressions`.
        public static let tooManyExpressions = Code("tooManyExpressions")
    }

    public var code: Code
    /// 1-based line of the offending text.
    public var line: Int
    /// 1-based column, counted in Characters from the start of the line.
    public var column: Int
    /// 0-based UTF-8 byte offset into the body.
    public var offset: Int
    /// What is wrong, in words.
    public var message: String
    /// The line around the offending place, at most a few dozen Characters.
    public var excerpt: String

    public init(code: Code, line: Int, column: Int, offset: Int, message: String, excerpt: String) {
        self.code = code
        self.line = line
        self.column = column
        self.offset = offset
        self.message = message
        self.excerpt = excerpt
    }

    public var description: String {
        "\(message) at line \(line), column \(column): \"\(excerpt)\""
    }
}
