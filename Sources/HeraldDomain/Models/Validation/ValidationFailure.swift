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
