/// One rendition of a rehearsed event (`dryRun`): what the registrations with this template
/// on this platform would receive, with its size against the platform's payload limit.
public struct RehearsalPreview: Sendable, Hashable, Codable {
    public var platform: Platform
    /// The template name, or `$native` for registrations without a template.
    public var template: String
    public var bytes: Int
    public var limit: Int
    public var payload: String
    /// Properties the template reads that the event does not set and that have no default:
    /// each rendered as "" for every device of this rendition. Absent when there are none.
    public var missingProperties: [String]?
    /// Properties read in place of missing ones through the template's `|` chains (a locale's
    /// fallbacks), as the deliveries' records name them. Absent when there are none.
    public var fallbacks: [String]?

    public init(
        platform: Platform, template: String, bytes: Int, limit: Int, payload: String, missingProperties: [String]? = nil,
        fallbacks: [String]? = nil
    ) {
        self.missingProperties = missingProperties
        self.fallbacks = fallbacks
        self.platform = platform
        self.template = template
        self.bytes = bytes
        self.limit = limit
        self.payload = payload
    }

    /// Its field in the rehearsal's previews hash: one per (platform, template).
    public var field: String { "\(platform.rawValue)|\(template)" }
}
