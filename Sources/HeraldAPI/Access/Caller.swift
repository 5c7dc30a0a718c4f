import HeraldDomain

/// Who is making a request, as established by ``RequestAuthenticator``.
public enum Caller: Sendable, Hashable {
    /// A holder of a shared-access token of the named policy.
    case policy(name: String, rights: Set<AccessRight>)
    /// An app user authenticated with a user token; `id` is the token's subject.
    case user(id: String)

    /// The system tag this caller's registrations carry (`$UserId:{id}`), for users.
    var userTag: String? {
        if case .user(let id) = self { return TagRules.userIdTag(id) }
        return nil
    }

    func has(_ right: AccessRight) -> Bool {
        if case .policy(_, let rights) = self { return rights.contains(right) || rights.contains(.manage) }
        return false
    }

    var isManager: Bool { has(.manage) }
}
