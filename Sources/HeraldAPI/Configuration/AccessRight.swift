/// What a shared-access policy lets its token holders do, named after Azure Notification
/// Hubs' claims. Rights do not imply each other except that `manage` allows everything.
public enum AccessRight: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// Create, read, update and delete single registrations and installations (devices).
    case listen
    /// Publish notifications and read their status (newsroom systems).
    case send
    /// Everything, including listing registrations by tag (operators and app backends).
    case manage

    public var description: String { rawValue }
}
