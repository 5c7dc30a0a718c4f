import HTTPTypes
import HeraldDomain
import Hummingbird

/// Azure-style installations: one device with several named templates, each its own
/// delivery target. PUT replaces, PATCH applies a JSON Patch (see ``InstallationPatch``).
struct InstallationRoutes: Sendable {
    let registry: any RegistrationStore
    let limits: APILimits

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
        let registry = try registry(of: context)
        let caller = try context.requireCaller()
        try caller.authorize(.manageOwnDevice)
        let id = try RequestReading.parameter("id", of: context)
        let bytes = try await RequestReading.body(of: request, limit: limits.maxRequestBytes)
        var installation = try Installation.decode(
            bytes, installationId: id, hub: RequestReading.hub(of: context), limits: limits.registration)
        var expected = try RequestReading.expectedVersion(request)
        if !caller.isManager {
            if case .found(let existing) = try await registry.installation(id: id) {
                try caller.requireOwnership(caller.owns(existing.installation), what: "installation \"\(id)\"")
                expected = expected ?? existing.version
            }
        }
        try authorizeContent(&installation, caller: caller, alreadyHeld: [])
        return try await store(installation, expected: expected, in: registry)
    }

    @Sendable func get(_ request: Request, context: APIRequestContext) async throws -> Response {
        let registry = try registry(of: context)
        let caller = try context.requireCaller()
        try caller.authorize(.manageOwnDevice)
        let stored = try await existing(id: RequestReading.parameter("id", of: context), caller: caller, in: registry)
        return .json(stored.documentJSON, headers: [.eTag: RequestReading.entityTag(stored.version)])
    }

    @Sendable func delete(_ request: Request, context: APIRequestContext) async throws -> Response {
        let registry = try registry(of: context)
        let caller = try context.requireCaller()
        try caller.authorize(.manageOwnDevice)
        let id = try RequestReading.parameter("id", of: context)
        let expected = try await RequestReading.deletionVersion(request, caller: caller) {
            try await existing(id: id, caller: caller, in: registry).version
        }
        try await registry.deleteInstallation(id: id, expectedVersion: expected)
        return Response(status: .noContent)
    }

    /// `PATCH /v1/installations/{id}` with `application/json-patch+json`. The patched
    /// document is validated like a PUT; it is written only if the installation is still
    /// at the version that was patched (or the `If-Match` version), so concurrent patches
    /// never lose each other's changes: the loser gets 412 and retries.
    @Sendable func patch(_ request: Request, context: APIRequestContext) async throws -> Response {
        let registry = try registry(of: context)
        let caller = try context.requireCaller()
        try caller.authorize(.manageOwnDevice)
        let id = try RequestReading.parameter("id", of: context)
        let bytes = try await RequestReading.body(of: request, limit: limits.maxRequestBytes)
        let patch = try JSONPatch.decode(RequestReading.json(bytes, what: "the JSON Patch"), maxOperations: limits.maxPatchOperations)
        let expected = try RequestReading.expectedVersion(request)
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
        return try await store(installation, expected: current.version, in: registry)
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

    func store(_ installation: Installation, expected: Int64?, in registry: any RegistrationStore) async throws -> Response {
        let stored = try await registry.putInstallation(installation, expectedVersion: expected)
        return .json(stored.documentJSON, headers: [.eTag: RequestReading.entityTag(stored.version)])
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
