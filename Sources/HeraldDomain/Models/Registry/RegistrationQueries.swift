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

/// A page request over registrations: by tag, by handle, by the start of a handle, or all
/// (none set); at most one of the three.
public struct RegistrationQuery: Sendable {
    public var tag: String?
    public var handle: String?
    /// The first characters of a handle (an operator pastes the start of a device token). A
    /// listing by prefix reads the slots' views rather than a set, so its pages may come back
    /// short, even empty, with a `nextCursor` to follow.
    public var handlePrefix: String?
    public var limit: Int
    /// `nextCursor` of the previous page; nil for the first.
    public var cursor: String?

    public init(tag: String? = nil, handle: String? = nil, handlePrefix: String? = nil, limit: Int = 100, cursor: String? = nil) {
        self.tag = tag
        self.handle = handle
        self.handlePrefix = handlePrefix
        self.limit = limit
        self.cursor = cursor
    }

    /// The problem with a query that sets more than one of tag, handle and handle prefix.
    public var conflict: ValidationIssue? {
        let given = [("tag", tag), ("handle", handle), ("handlePrefix", handlePrefix)].filter { $0.1 != nil }.map(\.0)
        guard given.count > 1 else { return nil }
        return ValidationIssue(
            field: given[1], code: ValidationIssue.Code.invalidValue,
            message: "list by one of tag, handle or handlePrefix; got \(given.joined(separator: " and "))")
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
