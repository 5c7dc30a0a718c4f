import Foundation

/// What a push service answered to one request, as the sender's transport read it.
public struct PushAnswer: Sendable, Hashable {
    public var statusCode: Int
    /// APNs: the body's `reason` (`BadDeviceToken`). FCM: the most specific error code, the
    /// `errorCode` of the error's `FcmError` details (`UNREGISTERED`) or else its `status`
    /// (`INVALID_ARGUMENT`).
    public var reason: String?
    /// `Retry-After` in seconds, when the service sent one.
    public var retryAfter: TimeInterval?
    /// APNs 410: the body's `timestamp`, the last moment the service knew the token to be invalid.
    public var unregisteredAt: Date?
    /// The `apns-id` header or the FCM message `name` of an accepted message.
    public var serviceId: String?

    public init(
        statusCode: Int, reason: String? = nil, retryAfter: TimeInterval? = nil, unregisteredAt: Date? = nil, serviceId: String? = nil
    ) {
        self.statusCode = statusCode
        self.reason = reason
        self.retryAfter = retryAfter
        self.unregisteredAt = unregisteredAt
        self.serviceId = serviceId
    }
}

/// What the sender does with an answer.
public enum PushVerdict: Sendable, Hashable {
    /// Accepted.
    case sent
    /// The token reaches no device: remove the registration (`TokenInvalidation` decides
    /// whether it may), receipt `unregistered`.
    case unregistered(since: Date?)
    /// This message will never be accepted: receipt `rejected`, nothing removed.
    case rejected(reason: String)
    /// Worth another attempt after a pause (throttling, a service error), not sooner than
    /// the service's `Retry-After`.
    case retry(reason: String, after: TimeInterval?)
    /// The service refused the credentials: make new ones (a provider token, an access token)
    /// and try again. Never removes anything.
    case renewCredentials(reason: String)
    /// A failure no retry mends (the account's configuration): receipt `failed`, nothing removed.
    case failed(reason: String)

    /// An answer no service-specific rule covers, by its status: 403 fails (the account's
    /// setup), 429 and 5xx are retried, other 4xx rejected; anything else is retried.
    static func byStatus(_ answer: PushAnswer, reason: String) -> PushVerdict {
        switch answer.statusCode {
        case 403: .failed(reason: reason)
        case 429, 500...599: .retry(reason: reason, after: answer.retryAfter)
        case 400...499: .rejected(reason: reason)
        default: .retry(reason: reason, after: answer.retryAfter)
        }
    }

    /// Whether another attempt may change the outcome.
    public var isRetryable: Bool {
        switch self {
        case .retry, .renewCredentials: true
        case .sent, .unregistered, .rejected, .failed: false
        }
    }
}

/// APNs answers (Apple's "Handling notification responses from APNs").
public enum APNsAnswers {
    /// Only `410` and `400 BadDeviceToken` remove a registration; `DeviceTokenNotForTopic`
    /// (the token of another app or environment) does not.
    public static func verdict(_ answer: PushAnswer) -> PushVerdict {
        let reason = answer.reason ?? "HTTP \(answer.statusCode)"
        switch answer.statusCode {
        case 200:
            return .sent
        case 410:
            return .unregistered(since: answer.unregisteredAt)
        case 400 where answer.reason == "BadDeviceToken":
            return .unregistered(since: nil)
        case 403 where ["ExpiredProviderToken", "InvalidProviderToken", "MissingProviderToken"].contains(answer.reason ?? ""):
            return .renewCredentials(reason: reason)
        default:
            // 403 BadCertificate, BadCertificateEnvironment, Forbidden: the team's key or setup.
            return .byStatus(answer, reason: reason)
        }
    }
}

/// FCM HTTP v1 answers (`messages:send` and its `ErrorCode`s).
public enum FCMAnswers {
    /// Only `UNREGISTERED` removes a registration; `INVALID_ARGUMENT` (which a malformed token
    /// also gets), `SENDER_ID_MISMATCH`, authentication and quota errors never do.
    public static func verdict(_ answer: PushAnswer) -> PushVerdict {
        let reason = answer.reason ?? "HTTP \(answer.statusCode)"
        if answer.statusCode == 200 { return .sent }
        switch answer.reason {
        case "UNREGISTERED":
            return .unregistered(since: nil)
        case "INVALID_ARGUMENT", "SENDER_ID_MISMATCH":
            return .rejected(reason: reason)
        case "THIRD_PARTY_AUTH_ERROR", "PERMISSION_DENIED":
            // The APNs credentials uploaded to Firebase, or the service account's rights.
            return .failed(reason: reason)
        case "QUOTA_EXCEEDED", "RESOURCE_EXHAUSTED", "UNAVAILABLE", "INTERNAL":
            return .retry(reason: reason, after: answer.retryAfter)
        default:
            break
        }
        return answer.statusCode == 401 ? .renewCredentials(reason: reason) : .byStatus(answer, reason: reason)
    }
}

/// Web Push services (RFC 8030) and what their answers mean.
public enum WebPushAnswers {
    /// 201 (and 202, for a `Prefer: respond-async` request) is accepted. 404 is an expired
    /// subscription (RFC 8030 §7.3) and 410 an unsubscribed one, as the deployed services
    /// answer: both remove the registration. 401 and 403 are the VAPID token refused: a new
    /// one is made once, and past that the credentials are wrong (`failed`, nothing removed).
    /// 413 is a payload the service will not take; 429 and 5xx are retried after `Retry-After`.
    public static func verdict(_ answer: PushAnswer) -> PushVerdict {
        let reason = answer.reason ?? "HTTP \(answer.statusCode)"
        switch answer.statusCode {
        case 200...202: return .sent
        case 404, 410: return .unregistered(since: nil)
        case 401, 403: return .renewCredentials(reason: reason)
        case 413: return .rejected(reason: reason)
        default: return .byStatus(answer, reason: reason)
        }
    }
}

/// Windows Push Notification Services and what its answers mean.
public enum WNSAnswers {
    /// 200 is accepted (`X-WNS-Status: received`, or `dropped`/`channelthrottled` which WNS also
    /// answers 200 for: the service took it, whether the device shows it is Windows' business).
    /// 404 (a channel URI WNS does not know) and 410 (an expired channel) remove the
    /// registration; 401 is the access token expired or refused: renewed and retried; 403 is the
    /// package not allowed on this channel (`failed`); 406 is WNS throttling this channel: retried.
    public static func verdict(_ answer: PushAnswer) -> PushVerdict {
        let reason = answer.reason ?? "HTTP \(answer.statusCode)"
        switch answer.statusCode {
        case 200: return .sent
        case 404, 410: return .unregistered(since: nil)
        case 401: return .renewCredentials(reason: reason)
        case 406: return .retry(reason: reason, after: answer.retryAfter)
        default: return .byStatus(answer, reason: reason)
        }
    }
}
