import HeraldDomain

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
    /// Seconds of clock skew tolerated when checking a user token's `exp` and `nbf`.
    public var userTokenLeeway: Int
    /// The longest a token may still be valid for: a `SharedAccessSignature` whose `se`, or a
    /// user token whose `exp`, lies further ahead is refused (a token that never expires is a
    /// second, unrotatable key). 31 days by default.
    public var maxTokenLifetime: Int
    /// Requests per second per caller and per hub in this process (nil: unlimited); past them,
    /// 429 `rate_limited` with `Retry-After`.
    public var rateLimits: RateLimits?
    /// The `maxRegistrations` of a hub other than the default whose limits set none (nil: no
    /// limit).
    public var defaultMaxRegistrations: Int?
    /// The default hub's limits (`HERALD_DEFAULT_HUB_LIMITS`): the other hubs' are in their
    /// documents; the default hub has none but these.
    public var defaultHubLimits: HubLimits
    public var limits: APILimits
    /// When set, a user token's `aud` must contain it.
    public var userTokenAudience: String?
    /// When set, a user token's `iss` must equal it.
    public var userTokenIssuer: String?
    /// How long the answer to an Azure test send waits for its devices' receipts.
    public var testSendWait: Duration
    /// How late a `sendAt` may be and how far ahead a schedule may reach (the planner's rules).
    public var scheduleRules: ScheduleRules

    public init(
        host: String = "127.0.0.1",
        port: Int = 8080,
        hubResource: String = "http://localhost:8080",
        policies: [SharedAccessPolicy] = [],
        userTokenKey: String? = nil,
        userTokenLeeway: Int = 30,
        limits: APILimits = .default,
        userTokenAudience: String? = nil,
        userTokenIssuer: String? = nil,
        scheduleRules: ScheduleRules = .default,
        maxTokenLifetime: Int = 2_678_400,
        rateLimits: RateLimits? = nil,
        defaultMaxRegistrations: Int? = nil,
        defaultHubLimits: HubLimits = HubLimits(),
        testSendWait: Duration = .seconds(15)
    ) {
        self.defaultHubLimits = defaultHubLimits
        self.testSendWait = testSendWait
        self.rateLimits = rateLimits
        self.defaultMaxRegistrations = defaultMaxRegistrations
        self.maxTokenLifetime = maxTokenLifetime
        self.scheduleRules = scheduleRules
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

extension APIConfiguration {
    /// HS256 keys shorter than the hash output are weak (RFC 7518 section 3.2), and
    /// jwt-kit refuses them.
    public static let minimumUserTokenKeyBytes = 32

    /// Refuses settings that would make authentication weak or ambiguous.
    public func validate() throws(APIConfigurationError) {
        if let key = userTokenKey {
            try Self.checkUserTokenKey(key)
        }
        var names = Set<String>()
        for policy in policies {
            if policy.key.isEmpty {
                throw APIConfigurationError(code: "empty_policy_key", message: "shared-access policy \"\(policy.name)\" has an empty key")
            }
            if !names.insert(policy.name).inserted {
                throw APIConfigurationError(code: "duplicate_policy", message: "two shared-access policies are named \"\(policy.name)\"")
            }
        }
        guard hubResource.contains("://") else {
            throw APIConfigurationError(
                code: "invalid_hub_resource",
                message: "the hub resource must be an absolute URI such as http://localhost:8080; got \"\(hubResource)\"")
        }
    }

    static func checkUserTokenKey(_ key: String) throws(APIConfigurationError) {
        guard key.utf8.count >= minimumUserTokenKeyBytes else {
            throw APIConfigurationError(
                code: "user_token_key_too_short",
                message: "the user-token key has \(key.utf8.count) bytes; HS256 needs at least \(minimumUserTokenKeyBytes)"
            )
        }
    }
}

/// The operator's API configuration cannot be used; `message` says which setting and why.
public struct APIConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Stable code: `user_token_key_too_short`, `empty_policy_key`, `duplicate_policy`, `invalid_hub_resource`,
    /// `openapi_document_missing`.
    public var code: String
    public var message: String

    public var description: String { "\(code): \(message)" }
}

/// Size and paging bounds of the HTTP API. Document-level limits (tags per registration,
/// template size) come from the domain's ``RegistrationLimits`` so the API and the topic
/// consumers agree on what is valid.
public struct APILimits: Sendable, Hashable {
    /// Largest request body accepted, in bytes (default 512 KiB, the largest registration
    /// document; notification bodies are also held to the event limit). Bigger bodies get 413.
    public var maxRequestBytes: Int
    /// Page size when `limit` is absent.
    public var defaultPageSize: Int
    /// Largest `limit` a list request may ask for.
    public var maxPageSize: Int
    /// Tags, templates and sizes checked when registrations and installations are written
    /// (default: 1,000 tags, 64 KiB template bodies).
    public var registration: RegistrationLimits
    /// Operations in one JSON Patch document.
    public var maxPatchOperations: Int

    public init(
        maxRequestBytes: Int = RecordSizes.maxDocumentBytes, defaultPageSize: Int = 100, maxPageSize: Int = 1_000,
        registration: RegistrationLimits = .default, maxPatchOperations: Int = 256
    ) {
        self.maxRequestBytes = maxRequestBytes
        self.defaultPageSize = defaultPageSize
        self.maxPageSize = maxPageSize
        self.registration = registration
        self.maxPatchOperations = maxPatchOperations
    }

    public static let `default` = APILimits()
}

/// An operator-configured, named key that signs `SharedAccessSignature` tokens, with the
/// rights those tokens carry. The key never travels; only HMACs made with it do.
public struct SharedAccessPolicy: Sendable, Hashable {
    /// The `skn` a token names, for example `DefaultListenSharedAccessSignature`.
    public var name: String
    /// The secret, used as UTF-8 bytes for HMAC-SHA256 (as Azure does with its base64-looking keys).
    public var key: String
    /// A second key that signs valid tokens too (a hub policy's, so a key is rotated
    /// without downtime).
    public var secondaryKey: String?
    public var rights: Set<AccessRight>

    public init(name: String, key: String, rights: Set<AccessRight>, secondaryKey: String? = nil) {
        self.name = name
        self.key = key
        self.rights = rights
        self.secondaryKey = secondaryKey
    }
}
