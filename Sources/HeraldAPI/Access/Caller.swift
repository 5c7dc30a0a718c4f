import HeraldDomain

/// Who is making a request, as established by ``RequestAuthenticator``.
public enum Caller: Sendable, Hashable {
    /// A holder of a shared-access token of the named namespace policy (the deployment's,
    /// valid on every hub).
    case policy(name: String, rights: Set<AccessRight>)
    /// A holder of a shared-access token of one hub's policy, valid on that hub's routes only.
    case hubPolicy(hub: HubName, name: String, rights: Set<AccessRight>)
    /// An app user authenticated with a user token; `id` is the token's subject.
    case user(id: String)

    /// The system tag this caller's registrations carry (`$UserId:{id}`), for users.
    var userTag: String? {
        if case .user(let id) = self { return TagRules.userIdTag(id) }
        return nil
    }

    func has(_ right: AccessRight) -> Bool {
        switch self {
        case .policy(_, let rights), .hubPolicy(_, _, let rights): return rights.contains(right) || rights.contains(.manage)
        case .user: return false
        }
    }

    /// A namespace policy with Manage: the only caller that may create, change and delete hubs.
    var managesNamespace: Bool {
        if case .policy(_, let rights) = self { return rights.contains(.manage) }
        return false
    }

    var isManager: Bool { has(.manage) }

    /// Who the caller is in an audit record: the policy's name (`<hub>/<name>` for a hub's
    /// policy), or `user:<id>`.
    var auditName: String {
        switch self {
        case .policy(let name, _): name
        case .hubPolicy(let hub, let name, _): "\(hub)/\(name)"
        case .user(let id): "user:\(id)"
        }
    }
}

/// The access rules, in one place:
/// - Manage may do everything.
/// - Listen may create, read, update and delete single registrations and installations that
///   belong to no user (no `$UserId:` tag, no `userId`), list registrations only by `handle`
///   (a device finding its own), and may not send, list by tag or user, or set reserved tags
///   (any `$UserId:`; `$InstallationId:` other than the installation's own). A device record
///   that belongs to a user is that user's (or Manage's) to change: installation ids are
///   chosen by clients and guessable, so Listen must not take one over.
/// - Send may publish notifications and read their status, nothing else.
/// - A user (Bearer user token) may create, read, update and delete only registrations and
///   installations that carry its own `$UserId:{sub}` (added server side), may list only its
///   own, and may not send.
extension Caller {
    func authorize(_ action: APIAction) throws(APIError) {
        let allowed: Bool
        switch (self, action) {
        case (.user, .manageOwnDevice), (.user, .listDevices): allowed = true
        case (.user, _): allowed = false
        case (_, .manageHubs): allowed = managesNamespace
        case (_, .manageOwnDevice): allowed = has(.listen) || has(.manage)
        case (_, .listDevices): allowed = has(.manage) || has(.listen)
        case (_, .publish), (_, .readNotificationStatus), (_, .openConsole): allowed = has(.send) || has(.manage)
        case (_, .reportEngagement): allowed = has(.listen) || has(.manage)
        case (_, .listSchedules), (_, .manageDeadLetters): allowed = has(.manage)
        }
        guard allowed else { throw .forbidden("insufficient_rights", "\(self.displayName) may not \(action)") }
    }

    /// Refuses reserved tags this caller may not set. `ownInstallationTag` is the
    /// `$InstallationId:{id}` of the installation being written, if any; `alreadyHeld` are
    /// reserved tags the stored document carries already (a partial update may keep them).
    func checkReservedTags(_ tags: [String], field: String, ownInstallationTag: String? = nil, alreadyHeld: Set<String> = [])
        throws(APIError)
    {
        if isManager { return }
        for (position, tag) in tags.enumerated() where tag.hasPrefix("$") && !alreadyHeld.contains(tag) {
            let path = "\(field)[\(position)]"
            if tag.hasPrefix(TagRules.userIdPrefix) {
                if let userTag, tag == userTag { continue }
                let message =
                    userTag == nil
                    ? "\(tag) is reserved: only a Manage policy or that user's own token may set $UserId tags"
                    : "\(tag) is reserved: a user token may carry only its own \(userTag!)"
                throw .forbidden("reserved_tag", message, field: path)
            }
            if tag.hasPrefix(TagRules.installationIdPrefix) {
                if tag == ownInstallationTag { continue }
                throw .forbidden(
                    "reserved_tag", "\(tag) is reserved: only the installation itself (or Manage) carries its $InstallationId tag",
                    field: path)
            }
        }
    }

    /// Whether this caller may see and change a registration with `tags`.
    func owns(tags: [String]) -> Bool {
        if let userTag { return tags.contains(userTag) }
        return isManager || !tags.contains { $0.hasPrefix(TagRules.userIdPrefix) }
    }

    /// Whether this caller may see and change `installation`.
    func owns(_ installation: Installation) -> Bool {
        if case .user(let id) = self { return installation.userId == id }
        return isManager || installation.userId == nil
    }

    func requireOwnership(_ owned: Bool, what: String) throws(APIError) {
        guard owned else {
            let message =
                userTag == nil
                ? "\(what) belongs to a user; only that user's token or a Manage policy may touch it"
                : "\(what) belongs to another user; a user token may only touch its own"
            throw .forbidden("not_owner", message)
        }
    }

    var displayName: String {
        switch self {
        case .policy(let name, _): "policy \"\(name)\""
        case .hubPolicy(let hub, let name, _): "policy \"\(name)\" of hub \"\(hub)\""
        case .user(let id): "user \"\(id)\""
        }
    }
}

/// What a route does, in the terms access rules are written in.
enum APIAction: Sendable, CustomStringConvertible {
    /// Create, read, update or delete one registration or installation.
    case manageOwnDevice
    /// List registrations or installations by a query.
    case listDevices
    /// `POST /v1/notifications`.
    case publish
    /// Report that a device opened or dismissed an alert (the app, with a Listen key).
    case reportEngagement
    /// `GET /v1/notifications/{id}`, its reach, and the hub's recent events.
    case readNotificationStatus
    /// Sign in to the console (`GET /v1/console/session`): the newsroom's keys, not a device's.
    case openConsole
    /// List and replay the events' dead letters (`/v1/deadletters`).
    case manageDeadLetters
    /// `GET /v1/notifications?state=scheduled`.
    case listSchedules
    /// Create, read, change and delete hubs and read their keys (`/v1/hubs`).
    case manageHubs

    var description: String {
        switch self {
        case .listSchedules: "list scheduled notifications"
        case .manageHubs: "manage hubs (a namespace Manage policy may)"
        case .manageOwnDevice: "register a device"
        case .listDevices: "list registrations"
        case .publish: "send notifications"
        case .readNotificationStatus: "read notification status"
        case .reportEngagement: "report engagements"
        case .openConsole: "open the console (a Send or Manage key may; a Listen key may not)"
        case .manageDeadLetters: "list or replay dead letters"
        }
    }
}
