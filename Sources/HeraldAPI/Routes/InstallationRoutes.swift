import HTTPTypes
import HeraldDomain
import Hummingbird

/// Azure-style installations: one device with several named templates, each its own
/// delivery target. PUT replaces, PATCH applies a JSON Patch (see ``InstallationPatch``).
struct InstallationRoutes: Sendable {
    let registry: any RegistrationStore
    let limits: APILimits
    /// The hub's registration limits; nil checks none.
    var quotas: RegistrationQuotas? = nil

    /// The registry of the request's hub (`/v1/hubs/{hub}/…`), or of the default hub.
    func registry(of context: APIRequestContext) throws -> any RegistrationStore {
        registry.store(for: try RequestReading.hub(of: context))
    }

    func add(to group: RouterGroup<APIRequestContext>) {
        group.get("installations", use: list)
        group.put("installations/{id}", use: put)
        group.get("installations/{id}", use: get)
        group.delete("installations/{id}", use: delete)
        group.patch("installations/{id}", use: patch)
    }

    @Sendable func put(_ request: Request, context: APIRequestContext) async throws -> Response {
        let id = try RequestReading.parameter("id", of: context)
        let bytes = try await RequestReading.body(of: request, limit: limits.maxRequestBytes)
        let stored = try await put(document: bytes, id: id, expected: RequestReading.expectedVersion(request), context: context)
        return .json(stored.documentJSON, headers: [.eTag: RequestReading.entityTag(stored.version)])
    }

    /// Creates or replaces installation `id` from Herald's installation document: the core of
    /// `PUT`, shared with the Azure route.
    func put(document bytes: [UInt8], id: String, expected: Int64?, context: APIRequestContext) async throws -> StoredInstallation {
        let registry = try registry(of: context)
        let caller = try context.requireCaller()
        try caller.authorize(.manageOwnDevice)
        var installation = try Installation.decode(
            bytes, installationId: id, hub: RequestReading.hub(of: context), limits: limits.registration)
        var expected = expected
        if !caller.isManager {
            if case .found(let existing) = try await registry.installation(id: id) {
                try caller.requireOwnership(caller.owns(existing.installation), what: "installation \"\(id)\"")
                expected = expected ?? existing.version
            }
        }
        try authorizeContent(&installation, caller: caller, alreadyHeld: [])
        try await quotas?.admit(hub: RequestReading.hub(of: context), writing: installation.registrations(version: 0)) {
            if case .found(let existing) = try await registry.installation(id: id) {
                return existing.installation.registrations(version: 0)
            }
            return []
        }
        return try await registry.putInstallation(installation, expectedVersion: expected)
    }

    @Sendable func get(_ request: Request, context: APIRequestContext) async throws -> Response {
        let stored = try await read(id: RequestReading.parameter("id", of: context), context: context)
        return .json(stored.documentJSON, headers: [.eTag: RequestReading.entityTag(stored.version)])
    }

    /// Installation `id` as the caller may see it: the core of `GET`.
    func read(id: String, context: APIRequestContext) async throws -> StoredInstallation {
        let registry = try registry(of: context)
        let caller = try context.requireCaller()
        try caller.authorize(.manageOwnDevice)
        return try await existing(id: id, caller: caller, in: registry)
    }

    @Sendable func delete(_ request: Request, context: APIRequestContext) async throws -> Response {
        try await delete(id: RequestReading.parameter("id", of: context), request: request, context: context)
        return Response(status: .noContent)
    }

    /// Deletes installation `id` (`If-Match` as for `DELETE`): the core of `DELETE`.
    func delete(id: String, request: Request, context: APIRequestContext) async throws {
        let registry = try registry(of: context)
        let caller = try context.requireCaller()
        try caller.authorize(.manageOwnDevice)
        let expected = try await RequestReading.deletionVersion(request, caller: caller) {
            try await existing(id: id, caller: caller, in: registry).version
        }
        try await registry.deleteInstallation(id: id, expectedVersion: expected)
    }

    /// `PATCH /v1/installations/{id}` with `application/json-patch+json`. The patched
    /// document is validated like a PUT; it is written only if the installation is still
    /// at the version that was patched (or the `If-Match` version), so concurrent patches
    /// never lose each other's changes: the loser gets 412 and retries.
    @Sendable func patch(_ request: Request, context: APIRequestContext) async throws -> Response {
        let id = try RequestReading.parameter("id", of: context)
        let bytes = try await RequestReading.body(of: request, limit: limits.maxRequestBytes)
        let operations = try JSONPatch.decode(RequestReading.json(bytes, what: "the JSON Patch"), maxOperations: limits.maxPatchOperations)
        let stored = try await apply(operations, id: id, expected: RequestReading.expectedVersion(request), context: context)
        return .json(stored.documentJSON, headers: [.eTag: RequestReading.entityTag(stored.version)])
    }

    /// Applies `patch` to installation `id`: the core of `PATCH`, shared with the Azure route.
    func apply(_ patch: JSONPatch, id: String, expected: Int64?, context: APIRequestContext) async throws -> StoredInstallation {
        let registry = try registry(of: context)
        let caller = try context.requireCaller()
        try caller.authorize(.manageOwnDevice)
        let current = try await existing(id: id, caller: caller, in: registry)
        if let expected, expected != current.version {
            throw APIError.preconditionFailed("installation \"\(id)\" is at version \(current.version), not \(expected)")
        }
        let patched = try InstallationPatch.apply(patch, to: current.installation.documentJSON())
        var patchedBytes: [UInt8] = []
        patched.write(into: &patchedBytes)
        var installation = try Installation.decode(
            patchedBytes, installationId: id, hub: RequestReading.hub(of: context), limits: limits.registration)
        try authorizeContent(&installation, caller: caller, alreadyHeld: current.installation.reservedTags)
        try await quotas?.admit(hub: RequestReading.hub(of: context), writing: installation.registrations(version: 0)) {
            current.installation.registrations(version: 0)
        }
        return try await registry.putInstallation(installation, expectedVersion: current.version)
    }

    /// `GET /v1/installations?tag=&userId=&limit=&cursor=`: Manage lists anything; a user
    /// only its own installations; Listen cannot list installations.
    @Sendable func list(_ request: Request, context: APIRequestContext) async throws -> Response {
        let registry = try registry(of: context)
        let caller = try context.requireCaller()
        try caller.authorize(.listDevices)
        let tag = try RequestReading.tagFilter(request)
        var userId = RequestReading.query("userId", of: request)
        let page = try RequestReading.page(request, limits: limits)
        switch caller {
        case .user(let id):
            guard userId == nil || userId == id else {
                throw APIError.forbidden(
                    "insufficient_rights", "a user token may list only its own installations (userId \(id))", field: "userId")
            }
            userId = id
        case .policy, .hubPolicy:
            guard caller.isManager else {
                throw APIError.forbidden("insufficient_rights", "\(caller.displayName) may not list installations; that needs Manage")
            }
        }
        let result = try await registry.listInstallations(
            InstallationQuery(tag: tag, userId: userId, limit: page.limit, cursor: page.cursor))
        return .json(
            .object([
                JSONMember(key: "items", value: .array(result.items.map(\.documentJSON))),
                JSONMember(key: "nextCursor", value: result.nextCursor.map(JSONValue.string) ?? .null),
            ]))
    }

    // MARK: Shared steps

    /// Applies the reserved-tag rules; a user's installations always carry its user id.
    func authorizeContent(_ installation: inout Installation, caller: Caller, alreadyHeld: Set<String>) throws(APIError) {
        switch caller {
        case .user(let id):
            if let userId = installation.userId, userId != id {
                throw .forbidden("reserved_tag", "a user token may set only its own userId \"\(id)\"", field: "userId")
            }
            installation.userId = id
        case .policy, .hubPolicy:
            if let userTag = installation.userTag, !caller.isManager, !alreadyHeld.contains(userTag) {
                throw .forbidden(
                    "reserved_tag", "setting userId adds \(userTag), which only a Manage policy or that user's token may do",
                    field: "userId")
            }
        }
        for (field, tags) in installation.taggedFields {
            try caller.checkReservedTags(tags, field: field, ownInstallationTag: installation.installationTag, alreadyHeld: alreadyHeld)
        }
    }

    func existing(id: String, caller: Caller, in registry: any RegistrationStore) async throws -> StoredInstallation {
        switch try await registry.installation(id: id) {
        case .found(let stored):
            try caller.requireOwnership(caller.owns(stored.installation), what: "installation \"\(id)\"")
            return stored
        case .gone: throw APIError.gone("installation \"\(id)\" was deleted")
        case .notFound: throw APIError.notFound("installation \"\(id)\"")
        }
    }
}
