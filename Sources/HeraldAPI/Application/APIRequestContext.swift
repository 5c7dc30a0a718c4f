import Hummingbird

/// Hummingbird's request context plus the authenticated caller.
public struct APIRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// Set by ``AuthenticationMiddleware`` for every `/v1` route.
    public var caller: Caller?

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.caller = nil
    }

    /// The caller, which every `/v1` handler can rely on.
    func requireCaller() throws(APIError) -> Caller {
        guard let caller else { throw .unauthenticated("missing_token", "this route needs an Authorization header") }
        return caller
    }
}
