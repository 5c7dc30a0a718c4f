import Foundation
import JWTKit
import Synchronization

/// The provider token (ES256 JWT: `kid` header, `iss` team id, `iat`) that authenticates APNs
/// requests, made once and reused: Apple refuses tokens older than an hour and throttles
/// providers that make new ones more than once every 20 minutes, so a token is renewed
/// after `refreshAfter` (50 minutes), or when APNs refused it and it is at least
/// `minimumAge` (20 minutes) old. Never one per request.
public final class APNsProviderToken: Sendable {
    struct Claims: JWTPayload {
        var iss: IssuerClaim
        var iat: IssuedAtClaim
        func verify(using algorithm: some JWTAlgorithm) throws {}
    }

    struct Current: Sendable {
        var token: String
        var issuedAt: Date
    }

    struct State: Sendable {
        var current: Current?
        /// The renewal in flight: callers that find no usable token wait for it instead of
        /// signing one each (a sender's connections start together).
        var renewal: Task<Current, any Error>?
    }

    public let refreshAfter: TimeInterval
    public let minimumAge: TimeInterval
    private let credentials: APNsCredentials
    private let keys: JWTKeyCollection
    private let state = Mutex(State())
    private let made = Atomic<Int>(0)

    public init(credentials: APNsCredentials, refreshAfter: TimeInterval = 50 * 60, minimumAge: TimeInterval = 20 * 60) async {
        self.credentials = credentials
        self.refreshAfter = refreshAfter
        self.minimumAge = minimumAge
        keys = JWTKeyCollection()
        await keys.add(ecdsa: credentials.signingKey, kid: JWKIdentifier(string: credentials.keyId))
    }

    /// How many tokens were made so far (metrics, tests).
    public var tokensMade: Int { made.load(ordering: .relaxed) }

    /// The token to send now.
    public func token(now: Date = Date()) async throws -> String {
        enum Next {
            case ready(String)
            case wait(Task<Current, any Error>)
        }
        let next: Next = state.withLock { state in
            if let current = state.current, now.timeIntervalSince(current.issuedAt) < refreshAfter { return .ready(current.token) }
            if let renewal = state.renewal { return .wait(renewal) }
            let renewal = Task { try await renew(now: now) }
            state.renewal = renewal
            return .wait(renewal)
        }
        switch next {
        case .ready(let token): return token
        case .wait(let renewal): return try await renewal.value.token
        }
    }

    /// APNs refused `token` (`ExpiredProviderToken`, `InvalidProviderToken`): forget it when it
    /// is still the current one and old enough to be replaced without being throttled.
    public func refused(_ token: String, now: Date = Date()) {
        state.withLock { state in
            if let held = state.current, held.token == token, now.timeIntervalSince(held.issuedAt) >= minimumAge {
                state.current = nil
            }
        }
    }

    /// Signs a token issued at `now` and makes it the current one; the renewal ends either way.
    private func renew(now: Date) async throws -> Current {
        do {
            let claims = Claims(iss: IssuerClaim(value: credentials.teamId), iat: IssuedAtClaim(value: now))
            let token = try await keys.sign(claims, kid: JWKIdentifier(string: credentials.keyId))
            made.add(1, ordering: .relaxed)
            let signed = Current(token: token, issuedAt: now)
            state.withLock {
                $0.current = signed
                $0.renewal = nil
            }
            return signed
        } catch {
            state.withLock { $0.renewal = nil }
            throw error
        }
    }
}
