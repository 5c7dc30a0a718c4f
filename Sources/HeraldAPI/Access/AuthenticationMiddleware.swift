import Hummingbird

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
