/// Everything the HTTP API needs from the operator. `HeraldApp` fills it from flags and
/// environment variables; the defaults suit a local run.
public struct APIConfiguration: Sendable {
    /// Address to bind (default `127.0.0.1`; use `0.0.0.0` in containers).
    public var host: String
    /// Port to bind (default 8080).
    public var port: Int
    /// The URI that names this hub in `SharedAccessSignature` tokens (default
    /// `http://localhost:8080`). A token's `sr` must be this URI or a URI under it that is a
    /// prefix of the request's URI (hub URI + request path), so one token can be scoped to a
    /// single registration or installation. Scheme and host compare case-insensitively,
    /// the path case-sensitively, and only at `/` boundaries.
    public var hubResource: String
    /// Named shared-access policies. Empty means every `/v1` request is refused with 401.
    public var policies: [SharedAccessPolicy]
    /// The HS256 secret that signs user tokens (notify users). `nil` disables user tokens.
    public var userTokenKey: String?
    /// Seconds of clock skew tolerated when checking a user token's `exp`.
    public var userTokenLeeway: Int
    public var limits: APILimits
    /// When set, a user token's `aud` must contain it.
    public var userTokenAudience: String?
    /// When set, a user token's `iss` must equal it.
    public var userTokenIssuer: String?

    public init(
        host: String = "127.0.0.1",
        port: Int = 8080,
        hubResource: String = "http://localhost:8080",
        policies: [SharedAccessPolicy] = [],
        userTokenKey: String? = nil,
        userTokenLeeway: Int = 30,
        limits: APILimits = .default,
        userTokenAudience: String? = nil,
        userTokenIssuer: String? = nil
    ) {
        self.userTokenAudience = userTokenAudience
        self.userTokenIssuer = userTokenIssuer
        self.host = host
        self.port = port
        self.hubResource = hubResource
        self.policies = policies
        self.userTokenKey = userTokenKey
        self.userTokenLeeway = userTokenLeeway
        self.limits = limits
    }
}
