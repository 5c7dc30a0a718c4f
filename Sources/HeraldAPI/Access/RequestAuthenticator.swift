import Foundation
import HeraldDomain
import HTTPTypes
import Hummingbird

/// Establishes the ``Caller`` of a request from its `Authorization` header: a
/// `SharedAccessSignature` (policy rights) or a `Bearer` user token (notify users).
/// Missing, forged, expired or out-of-scope tokens get 401 with `WWW-Authenticate`.
struct RequestAuthenticator: Sendable {
    let policies: [String: SharedAccessPolicy]
    let hubResource: String
    let userTokens: UserTokenVerifier?
    let maxTokenLifetime: Int
    /// Requests per caller and per hub (nil: unlimited).
    let limiter: RequestRateLimiter?
    let now: @Sendable () -> Date

    init(configuration: APIConfiguration, userTokens: UserTokenVerifier?, now: @escaping @Sendable () -> Date = Date.init) {
        self.policies = Dictionary(configuration.policies.map { ($0.name, $0) }, uniquingKeysWith: { _, last in last })
        var hub = configuration.hubResource
        while hub.hasSuffix("/") { hub.removeLast() }
        self.hubResource = hub
        self.userTokens = userTokens
        self.maxTokenLifetime = configuration.maxTokenLifetime
        self.limiter = configuration.rateLimits.map { RequestRateLimiter(limits: $0) }
        self.now = now
    }

    /// - Parameter hub: the hub of a `/v1/hubs/{hub}/…` route when it exists: a token of one
    ///   of its policies is accepted there too (a namespace policy's everywhere).
    func caller(authorization: String?, path: String, hub: HubDefinition? = nil) async throws(APIError) -> Caller {
        guard let authorization, !authorization.isEmpty else {
            throw .unauthenticated(
                "missing_token", "this route needs an Authorization header: a SharedAccessSignature or a Bearer user token")
        }
        let text = Substring(authorization).drop(while: { $0 == " " })
        let schemeEnd = text.firstIndex(of: " ") ?? text.endIndex
        let scheme = text[..<schemeEnd]
        let parameters = text[schemeEnd...].drop(while: { $0 == " " })
        if scheme.caseInsensitiveCompare(SharedAccessSignature.scheme) == .orderedSame {
            let signature: SharedAccessSignature
            do {
                signature = try SharedAccessSignature.parse(parameters)
            } catch {
                throw APIError.unauthenticated("malformed_token", error.message)
            }
            // The namespace's policy of that name, then the hub's (Azure names both kinds the
            // same, DefaultListenSharedAccessSignature and so on): the first whose key made it.
            var candidates: [(policy: SharedAccessPolicy, caller: Caller)] = []
            if let policy = policies[signature.policyName] {
                candidates.append((policy, .policy(name: policy.name, rights: policy.rights)))
            }
            if let hub, let own = hub.policy(named: signature.policyName) {
                candidates.append(
                    (
                        SharedAccessPolicy(name: own.name, key: own.primaryKey, rights: own.rights, secondaryKey: own.secondaryKey),
                        .hubPolicy(hub: hub.name, name: own.name, rights: own.rights)
                    ))
            }
            guard !candidates.isEmpty else {
                _ = try signature.verify(policies: [:], requestResource: hubResource + path, now: now(), maxLifetime: maxTokenLifetime)
                throw .unauthenticated("invalid_token", "the SharedAccessSignature is not valid for this hub")
            }
            var refusal: APIError?
            for candidate in candidates {
                do {
                    _ = try signature.verify(
                        policies: [candidate.policy.name: candidate.policy], requestResource: hubResource + path, now: now(),
                        maxLifetime: maxTokenLifetime)
                    return candidate.caller
                } catch {
                    // Signed with this key but expired or for another resource: that is the answer.
                    if error.code != "invalid_token" { throw error }
                    refusal = error
                }
            }
            throw refusal!
        }
        if scheme.caseInsensitiveCompare("Bearer") == .orderedSame {
            guard let userTokens else {
                throw .unauthenticated("user_tokens_disabled", "this hub accepts no user tokens (no user-token key is configured)")
            }
            return .user(id: try await userTokens.userId(of: parameters, now: now()))
        }
        throw .unauthenticated(
            "unsupported_scheme", "Authorization scheme \"\(scheme.prefix(32))\" is not supported; use SharedAccessSignature or Bearer")
    }
}

/// Authenticates every request of the group it is added to and records the caller. On a
/// hub's routes (`/v1/hubs/{hub}/…`) the hub's own policies are accepted too, and a hub that
/// does not exist is a 404 once the caller is known (never before: an anonymous caller learns
/// nothing about which hubs exist).
struct AuthenticationMiddleware: RouterMiddleware {
    typealias Context = APIRequestContext
    let authenticator: RequestAuthenticator
    let hubs: any HubStore
    /// The hub a path belongs to, as its route names it; nil for a route of no hub's data.
    var hubOf: @Sendable (String) -> String? = Self.hubOfDataRoute

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        let path = request.uri.path
        var hub: HubDefinition?
        var named: HubName?
        if let text = hubOf(path) {
            guard let name = HubName(text) else { throw APIError.invalidParameter("hub", HubName.problem(text) ?? "not a hub name") }
            named = name
            if !name.isDefault {
                do {
                    hub = try await hubs.hub(name)
                } catch {
                    throw APIError(
                        status: .serviceUnavailable, code: "unavailable", message: "the hubs cannot be read; retry later",
                        headers: [.retryAfter: "1"])
                }
            }
        }
        let caller = try await authenticator.caller(authorization: request.headers[.authorization], path: path, hub: hub)
        context.caller = caller
        if let named, !named.isDefault, hub == nil {
            throw APIError.notFound("hub \"\(named)\" (create it with PUT /v1/hubs/\(named))")
        }
        try authenticator.limiter?.admit(
            caller: caller, hub: named ?? .default, lane: RequestLane.of(path: path), now: authenticator.now())
        return try await next(request, context)
    }

    /// The `{hub}` of a path `/v1/hubs/{hub}/<more>`: a route of one hub's data (not the hub
    /// itself, `/v1/hubs/{hub}`, nor its policies).
    static func hubOfDataRoute(_ path: String) -> String? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true)
        guard parts.count >= 4, parts[0] == "v1", parts[1] == "hubs", parts[3] != "policies" else { return nil }
        return String(parts[2]).removingPercentEncoding ?? String(parts[2])
    }

    /// The `{hub}` of an Azure Notification Hubs path, `/{hub}/…`.
    static func hubOfAzureRoute(_ path: String) -> String? {
        guard let first = path.split(separator: "/", omittingEmptySubsequences: true).first else { return nil }
        return String(first).removingPercentEncoding ?? String(first)
    }
}
