/// The answer to a registration lookup.
public enum RegistrationLookup: Sendable {
    case found(Registration)
    /// Deleted; a write to the id answers 410.
    case gone
    case notFound
}

/// The answer to an installation lookup.
public enum InstallationLookup: Sendable {
    case found(StoredInstallation)
    case gone
    case notFound
}

/// An installation with the version the registry assigned to it (its `ETag`).
public struct StoredInstallation: Sendable {
    public var installation: Installation
    public var version: Int64

    public init(installation: Installation, version: Int64) {
        self.installation = installation
        self.version = version
    }
}

/// A page request over registrations: by tag, by handle, or all (neither set).
public struct RegistrationQuery: Sendable {
    public var tag: String?
    public var handle: String?
    public var limit: Int
    /// `nextCursor` of the previous page; nil for the first.
    public var cursor: String?

    public init(tag: String? = nil, handle: String? = nil, limit: Int = 100, cursor: String? = nil) {
        self.tag = tag
        self.handle = handle
        self.limit = limit
        self.cursor = cursor
    }
}

public struct RegistrationPage: Sendable {
    public var items: [Registration]
    /// nil on the last page.
    public var nextCursor: String?

    public init(items: [Registration], nextCursor: String?) {
        self.items = items
        self.nextCursor = nextCursor
    }
}

/// A page request over installations: by tag, by user, or all (neither set).
public struct InstallationQuery: Sendable {
    public var tag: String?
    public var userId: String?
    public var limit: Int
    public var cursor: String?

    public init(tag: String? = nil, userId: String? = nil, limit: Int = 100, cursor: String? = nil) {
        self.tag = tag
        self.userId = userId
        self.limit = limit
        self.cursor = cursor
    }
}

public struct InstallationPage: Sendable {
    public var items: [StoredInstallation]
    public var nextCursor: String?

    public init(items: [StoredInstallation], nextCursor: String?) {
        self.items = items
        self.nextCursor = nextCursor
    }
}
