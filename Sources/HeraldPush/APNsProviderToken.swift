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

    public let refreshAfter: TimeInterval
    public let minimumAge: TimeInterval
    private let credentials: APNsCredentials
    private let keys: JWTKeyCollection
    private let current = Mutex<Current?>(nil)
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
        if let current = current.withLock({ $0 }), now.timeIntervalSince(current.issuedAt) < refreshAfter {
            return current.token
        }
        return try await renew(now: now)
    }

    /// APNs refused `token` (`ExpiredProviderToken`, `InvalidProviderToken`): forget it when it
    /// is still the current one and old enough to be replaced without being throttled.
    public func refused(_ token: String, now: Date = Date()) {
        current.withLock { current in
            if let held = current, held.token == token, now.timeIntervalSince(held.issuedAt) >= minimumAge { current = nil }
        }
    }

    private func renew(now: Date) async throws -> String {
        let claims = Claims(iss: IssuerClaim(value: credentials.teamId), iat: IssuedAtClaim(value: now))
        let token = try await keys.sign(claims, kid: JWKIdentifier(string: credentials.keyId))
        made.add(1, ordering: .relaxed)
        current.withLock { $0 = Current(token: token, issuedAt: now) }
        return token
    }
}
