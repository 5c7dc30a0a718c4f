import Foundation

/// An app installation in the style of Azure Notification Hubs: one device channel with
/// tags, an optional user, and several named templates. Herald stores it as registrations:
/// each template is its own delivery target (see ``registrations(version:)``).
public struct Installation: Sendable, Hashable {
    /// The hub the installation belongs to; ids are unique within a hub.
    public var hub: HubName
    public var installationId: String
    public var platform: Platform
    /// The device handle (same rules as ``Registration/handle``).
    public var pushChannel: String
    /// Tags shared by every template of the installation.
    public var tags: [String]
    /// When set, every expanded registration also carries `$UserId:{userId}`.
    public var userId: String?
    /// Templates by name.
    public var templates: [String: InstallationTemplate]
    public var expiresAt: Date?
    /// The device's IANA time zone (``Registration/timeZone``), given to every template.
    public var timeZone: String?
    /// The device's quiet hours (``Registration/quietHours``), given to every template.
    public var quietHours: String?
    /// The device's own frequency cap (``Registration/frequencyCap``), given to every template.
    public var frequencyCap: Int?

    public init(
        installationId: String, platform: Platform, pushChannel: String, tags: [String] = [],
        userId: String? = nil, templates: [String: InstallationTemplate] = [:], expiresAt: Date? = nil, timeZone: String? = nil,
        hub: HubName = .default
    ) {
        self.hub = hub
        self.timeZone = timeZone
        self.installationId = installationId
        self.platform = platform
        self.pushChannel = pushChannel
        self.tags = tags
        self.userId = userId
        self.templates = templates
        self.expiresAt = expiresAt
    }
}

/// One named template of an installation, with tags of its own (for example a
/// `sports` template tagged `Sports` while the installation as a whole is tagged `World`).
public struct InstallationTemplate: Sendable, Hashable {
    public var body: String
    public var headers: [String: String]
    public var expiry: String?
    public var tags: [String]

    public init(body: String, headers: [String: String] = [:], expiry: String? = nil, tags: [String] = []) {
        self.body = body
        self.headers = headers
        self.expiry = expiry
        self.tags = tags
    }
}
