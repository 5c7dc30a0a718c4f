/// A registry operation failed. `code` is stable (the API maps it to an HTTP status in one
/// place); `message` says what and where; `issues` lists every validation problem.
public struct RegistryError: Error, Sendable, CustomStringConvertible {
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case invalid, notFound, gone, preconditionFailed, conflict, unavailable, timeout
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The document is not acceptable (400); see `issues`.
        public static let invalid = Code(.invalid)
        /// No such registration or installation (404).
        public static let notFound = Code(.notFound)
        /// The id was deleted or never issued (410).
        public static let gone = Code(.gone)
        /// `If-Match` named a version that is not the current one (412).
        public static let preconditionFailed = Code(.preconditionFailed)
        /// Another conditional write of the same id is in flight (409).
        public static let conflict = Code(.conflict)
        /// Kafka or Redis did not answer or refused (503).
        public static let unavailable = Code(.unavailable)
        /// Kafka did not acknowledge in time (504); the write may still land.
        public static let timeout = Code(.timeout)

        public var description: String { base.rawValue }
    }

    public var code: Code
    public var message: String
    public var issues: [ValidationIssue]
    /// For `.preconditionFailed` and `.conflict`: the version the registry holds (or the one
    /// in flight), so the API can put it in the response's `ETag`.
    public var currentVersion: Int64?

    public init(code: Code, message: String, issues: [ValidationIssue] = [], currentVersion: Int64? = nil) {
        self.code = code
        self.message = message
        self.issues = issues
        self.currentVersion = currentVersion
    }

    public var description: String {
        ([("\(code): \(message)")] + issues.map { "  \($0)" }).joined(separator: "\n")
    }
}
