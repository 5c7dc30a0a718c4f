import Foundation
import HeraldDomain
import Synchronization

/// Token buckets per caller and per hub, so that one key (a Listen key in every copy of an
/// app, a leaked Send key) or one hub cannot take the API from everyone else. Each bucket holds
/// up to `burst` requests and refills at `perSecond`; a request that finds its caller's or its
/// hub's bucket empty is refused with 429 and the seconds until a token is back. A hub has two
/// buckets of `perHub` each, one for its sends (`RequestLane.sends`) and one for the rest, so a
/// flood of registrations never makes a breaking alert wait for a token. Counted per API
/// process: with N processes behind a load balancer the deployment admits about N times as much.
public struct RateLimits: Sendable, Hashable {
    /// Requests per second of one caller: a shared-access policy (per hub) or a user.
    public var perCaller: Double
    /// Requests per second to one hub, all callers together.
    public var perHub: Double
    /// How many seconds' worth of requests a bucket holds (a burst after a quiet while).
    public var burstSeconds: Double

    public init(perCaller: Double, perHub: Double, burstSeconds: Double = 2) {
        self.perCaller = perCaller
        self.perHub = perHub
        self.burstSeconds = burstSeconds
    }
}

/// Which of its hub's buckets a request takes from.
enum RequestLane: Sendable, Hashable {
    /// Publishing, scheduling and cancelling notifications and reading their status: the
    /// newsroom's traffic (`/v1/notifications…`, Azure's `/messages`, `/schedulednotifications`
    /// and `/notifications`).
    case sends
    /// Registrations, installations, ids, hubs and policies: the devices' and operators' traffic.
    case registry

    /// The lane of a request to `path`, from the first segment after the hub: `/v1/<segment>`,
    /// `/v1/hubs/{hub}/<segment>` or Azure's `/{hub}/<segment>`.
    static func of(path: String) -> RequestLane {
        var segments = path.split(separator: "/", omittingEmptySubsequences: true)[...]
        if segments.first == "v1" {
            segments = segments.dropFirst()
            if segments.first == "hubs" { segments = segments.dropFirst(2) }
        } else {
            segments = segments.dropFirst()
        }
        return segments.first.map { Self.sendSegments.contains($0.lowercased()) } == true ? .sends : .registry
    }

    private static let sendSegments: Set<String> = ["notifications", "messages", "schedulednotifications"]
}

final class RequestRateLimiter: Sendable {
    struct Bucket {
        var tokens: Double
        var updated: Date
    }

    let limits: RateLimits
    /// Past this many buckets, the full ones (callers quiet for a while) are forgotten.
    let maxBuckets: Int
    private let buckets = Mutex<[String: Bucket]>([:])

    init(limits: RateLimits, maxBuckets: Int = 100_000) {
        self.limits = limits
        self.maxBuckets = maxBuckets
    }

    var bucketCount: Int { buckets.withLock { $0.count } }

    /// Takes a token from the caller's bucket and the hub's bucket of `lane`, or throws the 429
    /// saying which limit was reached and when to retry. A refused request takes no token.
    func admit(caller: Caller, hub: HubName, lane: RequestLane = .registry, now: Date) throws(APIError) {
        let callerKey = "\(hub.rawValue)\u{0}\(caller.rateKey)"
        let hubKey = "\(hub.rawValue)\u{0}" + (lane == .sends ? "sends" : "")
        let refusal = buckets.withLock { buckets -> (what: String, wait: Double)? in
            if buckets.count > maxBuckets { Self.forgetFull(&buckets, limits: limits, now: now) }
            let callerWait = Self.wait(&buckets, callerKey, rate: limits.perCaller, burst: limits.burstSeconds, now: now)
            let hubWait = Self.wait(&buckets, hubKey, rate: limits.perHub, burst: limits.burstSeconds, now: now)
            if callerWait > 0 { return ("\(caller.displayName)'s \(Self.describe(limits.perCaller)) requests a second", callerWait) }
            if hubWait > 0 {
                let what = lane == .sends ? "send requests" : "registration requests"
                return ("hub \"\(hub)\"'s \(Self.describe(limits.perHub)) \(what) a second", hubWait)
            }
            buckets[callerKey]!.tokens -= 1
            buckets[hubKey]!.tokens -= 1
            return nil
        }
        guard let refusal else { return }
        let seconds = max(1, Int(refusal.wait.rounded(.up)))
        throw APIError(
            status: .tooManyRequests, code: "rate_limited",
            message: "\(refusal.what) are used up; retry in \(seconds) s", headers: [.retryAfter: String(seconds)])
    }

    /// Refills the bucket of `key` to `now`; the seconds until it holds a whole token (0 when
    /// it does).
    private static func wait(_ buckets: inout [String: Bucket], _ key: String, rate: Double, burst: Double, now: Date) -> Double {
        let capacity = max(1, rate * burst)
        var bucket = buckets[key] ?? Bucket(tokens: capacity, updated: now)
        bucket.tokens = min(capacity, bucket.tokens + max(0, now.timeIntervalSince(bucket.updated)) * rate)
        bucket.updated = now
        buckets[key] = bucket
        return bucket.tokens >= 1 ? 0 : (1 - bucket.tokens) / rate
    }

    private static func forgetFull(_ buckets: inout [String: Bucket], limits: RateLimits, now: Date) {
        let refill = max(limits.burstSeconds, 1)
        buckets = buckets.filter { now.timeIntervalSince($0.value.updated) < refill }
    }

    private static func describe(_ rate: Double) -> String {
        rate == rate.rounded() ? String(Int(rate)) : String(rate)
    }
}

extension Caller {
    /// Whose bucket a request takes from.
    var rateKey: String {
        switch self {
        case .policy(let name, _): "policy\u{0}" + name
        case .hubPolicy(_, let name, _): "hub-policy\u{0}" + name
        case .user(let id): "user\u{0}" + id
        }
    }
}
