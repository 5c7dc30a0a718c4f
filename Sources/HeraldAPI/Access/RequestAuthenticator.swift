import Foundation
import HTTPTypes
import Hummingbird

/// Establishes the ``Caller`` of a request from its `Authorization` header: a
/// `SharedAccessSignature` (policy rights) or a `Bearer` user token (notify users).
/// Missing, forged, expired or out-of-scope tokens get 401 with `WWW-Authenticate`.
struct RequestAuthenticator: Sendable {
    let policies: [String: SharedAccessPolicy]
    let hubResource: String
    let userTokens: UserTokenVerifier?
    let now: @Sendable () -> Date

    init(configuration: APIConfiguration, userTokens: UserTokenVerifier?, now: @escaping @Sendable () -> Date = Date.init) {
        self.policies = Dictionary(configuration.policies.map { ($0.name, $0) }, uniquingKeysWith: { _, last in last })
        var hub = configuration.hubResource
        while hub.hasSuffix("/") { hub.removeLast() }
        self.hubResource = hub
        self.userTokens = userTokens
        self.now = now
    }

    func caller(authorization: String?, path: String) async throws(APIError) -> Caller {
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
            let policy = try signature.verify(policies: policies, requestResource: hubResource + path, now: now())
            return .policy(name: policy.name, rights: policy.rights)
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

/// Authenticates every request of the group it is added to and records the caller.
struct AuthenticationMiddleware: RouterMiddleware {
    typealias Context = APIRequestContext
    let authenticator: RequestAuthenticator

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        context.caller = try await authenticator.caller(authorization: request.headers[.authorization], path: request.uri.path)
        return try await next(request, context)
    }
}
