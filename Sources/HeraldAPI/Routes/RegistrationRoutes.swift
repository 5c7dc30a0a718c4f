import HTTPTypes
import HeraldDomain
import Hummingbird

/// Azure-style registrations: ids from `POST /v1/registrationIDs`, then upsert, read and
/// delete by id with ETag / If-Match, and paged listing.
struct RegistrationRoutes: Sendable {
    let registry: any RegistrationStore
    let limits: APILimits
    /// The hub's registration limits; nil checks none.
    var quotas: RegistrationQuotas? = nil

    /// The registry of the request's hub (`/v1/hubs/{hub}/…`), or of the default hub.
    func registry(of context: APIRequestContext) throws -> any RegistrationStore {
        registry.store(for: try RequestReading.hub(of: context))
    }

    func add(to group: RouterGroup<APIRequestContext>) {
        group.post("registrationIDs", use: createId)
        group.get("registrations", use: list)
        group.put("registrations/{id}", use: put)
        group.get("registrations/{id}", use: get)
        group.delete("registrations/{id}", use: delete)
    }

    /// `POST /v1/registrationIDs`: 201, `Location: /v1/registrations/{id}`.
    @Sendable func createId(_ request: Request, context: APIRequestContext) async throws -> Response {
        let registry = try registry(of: context)
        try context.requireCaller().authorize(.manageOwnDevice)
        let id = registry.issueRegistrationId()
        let location = try RequestReading.hubPath(of: context) + "/registrations/\(id)"
        return .json(
            .object([JSONMember(key: "registrationId", value: .string(id)), JSONMember(key: "location", value: .string(location))]),
            status: .created, headers: [.location: location]
        )
    }

    /// `PUT /v1/registrations/{id}`: upsert; 410 for an id never issued or deleted; 412
    /// when `If-Match` names another version. 200 with the stored registration.
    @Sendable func put(_ request: Request, context: APIRequestContext) async throws -> Response {
        try context.requireCaller().authorize(.manageOwnDevice)
        let id = try RequestReading.parameter("id", of: context)
        try requireIssued(id, in: registry(of: context))
        let bytes = try await RequestReading.body(of: request, limit: limits.maxRequestBytes)
        let registration = try Registration.decode(
            bytes, registrationId: id, hub: RequestReading.hub(of: context), limits: limits.registration)
        let stored = try await upsert(registration, expected: RequestReading.expectedVersion(request), context: context)
        return .json(stored.jsonValue, headers: [.eTag: RequestReading.entityTag(stored.version)])
    }

    /// 410 unless this hub issued `id`.
    func requireIssued(_ id: String, in registry: any RegistrationStore) throws {
        guard registry.isIssued(id) else {
            throw APIError.gone("registration id \"\(id)\" was not issued by this hub; ask POST /v1/registrationIDs for a new one")
        }
    }

    /// Stores `registration` (decoded from a request, under an issued id) for the caller: a
    /// user's tag is added, a caller without Manage writes only over its own registration, the
    /// hub's limits are checked. Shared with Azure's Atom routes.
    func upsert(_ registration: Registration, expected: Int64?, context: APIRequestContext) async throws -> Registration {
        let registry = try registry(of: context)
        let caller = try context.requireCaller()
        try caller.authorize(.manageOwnDevice)
        var registration = registration
        let id = registration.registrationId
        try caller.checkReservedTags(registration.tags, field: "tags")
        var expected = expected
        if let userTag = caller.userTag, !registration.tags.contains(userTag) { registration.tags.append(userTag) }
        if !caller.isManager {
            switch try await registry.registration(id: id) {
            case .found(let existing):
                try caller.requireOwnership(caller.owns(tags: existing.tags), what: "registration \"\(id)\"")
                // Write only over the record whose owner was just checked.
                expected = expected ?? existing.version
            case .gone:
                throw APIError.gone("registration \"\(id)\" was deleted; ask POST /v1/registrationIDs for a new id")
            case .notFound:
                break
            }
        }
        try await quotas?.admit(hub: RequestReading.hub(of: context), writing: [registration]) {
            if case .found(let existing) = try await registry.registration(id: id) { return [existing] }
            return []
        }
        return try await registry.put(registration, expectedVersion: expected)
    }

    @Sendable func get(_ request: Request, context: APIRequestContext) async throws -> Response {
        let registration = try await read(id: RequestReading.parameter("id", of: context), context: context)
        return .json(registration.jsonValue, headers: [.eTag: RequestReading.entityTag(registration.version)])
    }

    /// The caller's registration `id`, or 404 / 410 / 403.
    func read(id: String, context: APIRequestContext) async throws -> Registration {
        let caller = try context.requireCaller()
        try caller.authorize(.manageOwnDevice)
        return try await existing(id: id, caller: caller, in: registry(of: context))
    }

    /// `DELETE /v1/registrations/{id}`: 204; 412 when `If-Match` names another version.
    @Sendable func delete(_ request: Request, context: APIRequestContext) async throws -> Response {
        try await remove(id: RequestReading.parameter("id", of: context), request: request, context: context)
        return Response(status: .noContent)
    }

    /// Deletes the caller's registration `id`, at the version `If-Match` names (any, without it).
    func remove(id: String, request: Request, context: APIRequestContext) async throws {
        let registry = try registry(of: context)
        let caller = try context.requireCaller()
        try caller.authorize(.manageOwnDevice)
        let expected = try await RequestReading.deletionVersion(request, caller: caller) {
            try await existing(id: id, caller: caller, in: registry).version
        }
        try await registry.delete(id: id, expectedVersion: expected)
    }

    /// `GET /v1/registrations?tag=&handle=&handlePrefix=&limit=&cursor=` (by one of tag,
    /// handle and the start of a handle). Manage lists anything; Listen only by `handle`; a
    /// user only its own (`tag` defaults to its `$UserId:{sub}`).
    @Sendable func list(_ request: Request, context: APIRequestContext) async throws -> Response {
        let page = try RequestReading.page(request, limits: limits)
        let result = try await list(
            tag: RequestReading.tagFilter(request), handle: RequestReading.query("handle", of: request),
            handlePrefix: RequestReading.query("handlePrefix", of: request), limit: page.limit, cursor: page.cursor, context: context)
        return .json(
            .object([
                JSONMember(key: "items", value: .array(result.items.map(\.jsonValue))),
                JSONMember(key: "nextCursor", value: result.nextCursor.map(JSONValue.string) ?? .null),
            ]))
    }

    /// A page of registrations by one of tag, handle and the start of a handle, that the caller
    /// may see: Manage lists anything; Listen only by a whole handle; a user only its own (by its
    /// `$UserId:{sub}` tag when no tag is given).
    func list(tag: String?, handle: String?, handlePrefix: String? = nil, limit: Int, cursor: String?, context: APIRequestContext)
        async throws -> (
            items: [Registration], nextCursor: String?
        )
    {
        let registry = try registry(of: context)
        let caller = try context.requireCaller()
        try caller.authorize(.listDevices)
        if handlePrefix != nil, !caller.isManager {
            throw APIError.forbidden(
                "insufficient_rights", "listing registrations by the start of a handle needs Manage; Listen may list by a whole handle",
                field: "handlePrefix")
        }
        var tag = tag
        if let userTag = caller.userTag {
            guard tag == nil || tag == userTag else {
                throw APIError.forbidden(
                    "insufficient_rights", "a user token may list only its own registrations (tag \(userTag))", field: "tag")
            }
            // The registry lists by tag or by handle, not both: by handle, the page is
            // narrowed to the user's own registrations here.
            tag = handle == nil ? userTag : nil
        } else if !caller.isManager {
            guard tag == nil, handle != nil else {
                throw APIError.forbidden(
                    "insufficient_rights", "\(caller.displayName) may list registrations only by handle; listing by tag needs Manage",
                    field: "tag")
            }
        }
        let result = try await registry.list(
            RegistrationQuery(tag: tag, handle: handle, handlePrefix: handlePrefix, limit: limit, cursor: cursor))
        return (result.items.filter { caller.owns(tags: $0.tags) }, result.nextCursor)
    }

    /// The stored registration `id`, or 404 / 410 / 403 (another user's).
    func existing(id: String, caller: Caller, in registry: any RegistrationStore) async throws -> Registration {
        switch try await registry.registration(id: id) {
        case .found(let registration):
            try caller.requireOwnership(caller.owns(tags: registration.tags), what: "registration \"\(id)\"")
            return registration
        case .gone: throw APIError.gone("registration \"\(id)\" was deleted")
        case .notFound: throw APIError.notFound("registration \"\(id)\"")
        }
    }
}
