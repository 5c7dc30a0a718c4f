/// A push credential or setting that cannot be used, named by its file (or setting) and field,
/// so the sender stops at start-up with one line an operator can act on.
public struct PushConfigurationError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The file the value came from, or the setting's name.
    public var source: String
    /// The field within it (a JSON member, a PEM block), or nil for the whole source.
    public var field: String?
    public var problem: String

    public init(source: String, field: String? = nil, problem: String) {
        self.source = source
        self.field = field
        self.problem = problem
    }

    public var description: String {
        if let field { return "\(source): \(field): \(problem)" }
        return "\(source): \(problem)"
    }
}
