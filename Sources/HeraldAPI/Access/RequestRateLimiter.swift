import Foundation
import HeraldDomain
import Synchronization

/// Token buckets per caller and per hub, so that one key (a Listen key in every copy of an
/// app, a leaked Send key) or one hub cannot take the API from everyone else. Each bucket holds
/// up to `burst` requests and refills at `perSecond`; a request that finds its caller's or its
/// hub's bucket empty is refused with 429 and the seconds until a token is back. Counted per
/// API process: with N processes behind a load balancer the deployment admits about N times
/// as much.
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

    /// Takes a token from the caller's bucket and the hub's, or throws the 429 saying which
    /// limit was reached and when to retry. A refused request takes no token.
    func admit(caller: Caller, hub: HubName, now: Date) throws(APIError) {
        let callerKey = "\(hub.rawValue)\u{0}\(caller.rateKey)"
        let hubKey = "\(hub.rawValue)\u{0}"
        let refusal = buckets.withLock { buckets -> (what: String, wait: Double)? in
            if buckets.count > maxBuckets { Self.forgetFull(&buckets, limits: limits, now: now) }
            let callerWait = Self.wait(&buckets, callerKey, rate: limits.perCaller, burst: limits.burstSeconds, now: now)
            let hubWait = Self.wait(&buckets, hubKey, rate: limits.perHub, burst: limits.burstSeconds, now: now)
            if callerWait > 0 { return ("\(caller.displayName)'s \(Self.describe(limits.perCaller)) requests a second", callerWait) }
            if hubWait > 0 { return ("hub \"\(hub)\"'s \(Self.describe(limits.perHub)) requests a second", hubWait) }
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
