import Foundation
import HTTPTypes
import HeraldDomain
import Hummingbird

/// The deployment's hubs, for a namespace Manage policy: create or change one (`PUT`), read
/// them (policies without their keys), delete one, and read or regenerate a policy's keys with
/// the connection strings Azure Notification Hubs' SDKs take.
struct HubRoutes: Sendable {
    let hubs: any HubStore
    /// The deployment's hub URI (`hubResource`): connection strings name its host.
    let hubResource: String
    let credentialCheck: APIServices.CredentialCheck?

    func add(to group: RouterGroup<APIRequestContext>) {
        group.get("hubs", use: list)
        group.put("hubs/{hub}", use: put)
        group.get("hubs/{hub}", use: get)
        group.delete("hubs/{hub}", use: delete)
        group.post("hubs/{hub}/policies/{policy}/keys", use: keys)
        group.post("hubs/{hub}/policies/{policy}/regenerate", use: regenerate)
    }

    @Sendable func list(_ request: Request, context: APIRequestContext) async throws -> Response {
        try context.requireCaller().authorize(.manageHubs)
        let all = await hubs.allHubs()
        return .json(.object([JSONMember(key: "hubs", value: .array(all.map(\.redactedJSON)))]))
    }

    /// `PUT /v1/hubs/{hub}`: 201 with the new hub (Azure's two default policies unless the body
    /// names policies), 200 with the changed one.
    @Sendable func put(_ request: Request, context: APIRequestContext) async throws -> Response {
        try context.requireCaller().authorize(.manageHubs)
        let name = try namedHub(context)
        let bytes = try await RequestReading.body(of: request, limit: 65_536)
        let current = try await lookup(name)
        let hub = try HubDefinition.decodeRequest(bytes, name: name, current: current)
        if hub.credentials != current?.credentials, let credentialCheck {
            let problems = credentialCheck(hub.credentials, name)
            if !problems.isEmpty { throw ValidationFailure(issues: problems) }
        }
        try await store(hub)
        return .json(hub.redactedJSON, status: current == nil ? .created : .ok, headers: [.location: "/v1/hubs/\(name)"])
    }

    @Sendable func get(_ request: Request, context: APIRequestContext) async throws -> Response {
        try context.requireCaller().authorize(.manageHubs)
        return .json(try await existing(context).redactedJSON)
    }

    /// `DELETE /v1/hubs/{hub}`: 204; its routes answer 404 from then on.
    @Sendable func delete(_ request: Request, context: APIRequestContext) async throws -> Response {
        try context.requireCaller().authorize(.manageHubs)
        let hub = try await existing(context)
        do {
            try await hubs.delete(hub.name)
        } catch {
            throw Self.unavailable(error)
        }
        return Response(status: .noContent)
    }

    /// `POST /v1/hubs/{hub}/policies/{policy}/keys`: the policy's keys and connection strings.
    @Sendable func keys(_ request: Request, context: APIRequestContext) async throws -> Response {
        try context.requireCaller().authorize(.manageHubs)
        let hub = try await existing(context)
        return .json(try keysDocument(policy(of: hub, context)))
    }

    /// `POST /v1/hubs/{hub}/policies/{policy}/regenerate` with `{"keyType": "primary"}` or
    /// `"secondary"`: a new key replaces that one; tokens signed with the other keep working,
    /// so clients move to the other key first and nothing stops.
    @Sendable func regenerate(_ request: Request, context: APIRequestContext) async throws -> Response {
        try context.requireCaller().authorize(.manageHubs)
        var hub = try await existing(context)
        let policy = try policy(of: hub, context)
        let body = try RequestReading.json(try await RequestReading.body(of: request, limit: 1_024), what: "the request")
        guard case .object(let members) = body, members.allSatisfy({ $0.key == "keyType" }),
            case .string(let keyType)? = body["keyType"], ["primary", "secondary"].contains(keyType.lowercased())
        else {
            throw APIError.invalidBody(field: "keyType", #"the body is {"keyType": "primary"} or {"keyType": "secondary"}"#)
        }
        var changed = policy
        if keyType.lowercased() == "primary" { changed.primaryKey = HubPolicy.newKey() } else { changed.secondaryKey = HubPolicy.newKey() }
        hub.policies = hub.policies.map { $0.name == changed.name ? changed : $0 }
        hub.version += 1
        try await store(hub)
        return .json(keysDocument(changed))
    }

    // MARK: Shared steps

    private func namedHub(_ context: APIRequestContext) throws -> HubName {
        let name = try RequestReading.hub(of: context)
        if name.isDefault {
            throw APIError.invalidParameter(
                "hub", "the default hub is the deployment's own: its policies are the deployment's settings (HERALD_POLICIES)")
        }
        return name
    }

    private func existing(_ context: APIRequestContext) async throws -> HubDefinition {
        let name = try namedHub(context)
        guard let hub = try await lookup(name) else { throw APIError.notFound("hub \"\(name)\"") }
        return hub
    }

    private func lookup(_ name: HubName) async throws -> HubDefinition? {
        do {
            return try await hubs.hub(name)
        } catch {
            throw Self.unavailable(error)
        }
    }

    private func policy(of hub: HubDefinition, _ context: APIRequestContext) throws -> HubPolicy {
        let name = try RequestReading.parameter("policy", of: context)
        guard let policy = hub.policy(named: name) else { throw APIError.notFound("policy \"\(name)\" of hub \"\(hub.name)\"") }
        return policy
    }

    private func store(_ hub: HubDefinition) async throws {
        do {
            try await hubs.put(hub)
        } catch {
            throw Self.unavailable(error)
        }
    }

    static func unavailable(_ error: any Error) -> APIError {
        APIError(
            status: .serviceUnavailable, code: "unavailable", message: "the hubs topic did not take the change (\(error)); retry",
            headers: [.retryAfter: "1"])
    }

    /// The keys of `policy` with Azure-style connection strings for this deployment.
    func keysDocument(_ policy: HubPolicy) -> JSONValue {
        .object([
            JSONMember(key: "policy", value: .string(policy.name)),
            JSONMember(key: "rights", value: .array(policy.rights.map(\.rawValue).sorted().map(JSONValue.string))),
            JSONMember(key: "primaryKey", value: .string(policy.primaryKey)),
            JSONMember(key: "secondaryKey", value: .string(policy.secondaryKey)),
            JSONMember(key: "primaryConnectionString", value: .string(connectionString(policy.name, key: policy.primaryKey))),
            JSONMember(key: "secondaryConnectionString", value: .string(connectionString(policy.name, key: policy.secondaryKey))),
        ])
    }

    func connectionString(_ policy: String, key: String) -> String {
        HubDefinition.connectionString(hubResource: hubResource, policy: policy, key: key)
    }
}
