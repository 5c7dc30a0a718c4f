/// One thing wrong with a document, and where: `field` is a path such as `handle`,
/// `template.body`, `tags[3]` or `native.apns` (empty for the document as a whole).
public struct ValidationIssue: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The path of the offending field, `""` for the whole document.
    public var field: String
    /// Stable machine-readable code, for example `invalid_tag` or `template_too_large`.
    public var code: String
    /// What is wrong, in words a newsroom engineer can act on.
    public var message: String

    public init(field: String, code: String, message: String) {
        self.field = field
        self.code = code
        self.message = message
    }

    public var description: String {
        field.isEmpty ? "\(code): \(message)" : "\(field): \(code): \(message)"
    }
}

extension ValidationIssue {
    /// Codes shared by all documents.
    public enum Code {
        public static let malformedJSON = "malformed_json"
        public static let tooLarge = "too_large"
        public static let missingField = "missing_field"
        public static let invalidType = "invalid_type"
        public static let invalidValue = "invalid_value"
        public static let invalidIdentifier = "invalid_identifier"
        public static let unknownPlatform = "unknown_platform"
        public static let invalidHandle = "invalid_handle"
        public static let invalidTag = "invalid_tag"
        public static let tooManyTags = "too_many_tags"
        public static let emptyTags = "empty_tags"
        public static let invalidTagExpression = "invalid_tag_expression"
        public static let invalidTemplate = "invalid_template"
        public static let templateTooLarge = "template_too_large"
        /// A template whose rendition would pass its platform's payload limit for ordinary
        /// property values (too much fixed text, or one value copied too many times).
        public static let templateAmplification = "template_amplification"
        /// A native payload over its platform's payload limit.
        public static let payloadTooLarge = "payload_too_large"
        public static let invalidHeader = "invalid_header"
        public static let invalidTimestamp = "invalid_timestamp"
        /// A `sendAt` or `sendAtLocal` in the past, beyond the horizon, or both given.
        public static let invalidSchedule = "invalid_schedule"
        public static let duplicateProperty = "duplicate_property"
        /// A member the document does not have (a typo, or a field of another API).
        public static let unknownField = "unknown_field"
    }
}

/// A document was refused; `issues` lists every problem found, never just the first.
public struct ValidationFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// Stable code for the failure as a whole (the individual codes are in `issues`).
    public var code: String { "validation_failed" }
    public var issues: [ValidationIssue]

    public init(issues: [ValidationIssue]) {
        self.issues = issues
    }

    /// One line per issue.
    public var description: String {
        issues.map(\.description).joined(separator: "\n")
    }
}
