import Foundation
import JWTKit

/// A signed statement "this request acts for user `sub`", as an app backend issues after
/// its own login (the seed's notify-users flow). HS256 JWTs with `sub` and `exp`; requests
/// send it as `Authorization: Bearer <token>`.
public enum UserToken {
    /// A token for `user`, signed with the operator's user-token key, valid until `expiry`.
    /// - Throws: ``APIConfigurationError`` when `key` is shorter than 32 bytes.
    public static func make(user: String, key: String, expiry: Date, audience: String? = nil, issuer: String? = nil) async throws -> String
    {
        try APIConfiguration.checkUserTokenKey(key)
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: key), digestAlgorithm: .sha256)
        let payload = UserTokenClaims(
            sub: SubjectClaim(value: user), exp: ExpirationClaim(value: expiry), nbf: nil, iat: IssuedAtClaim(value: Date()),
            aud: audience.map { AudienceClaim(value: [$0]) }, iss: issuer.map { IssuerClaim(value: $0) }
        )
        return try await keys.sign(payload)
    }
}

/// The claims of a ``UserToken``. Expiry is checked by ``UserTokenVerifier`` (with leeway),
/// not here, so the error can say which rule failed.
struct UserTokenClaims: JWTPayload {
    var sub: SubjectClaim
    var exp: ExpirationClaim
    var nbf: NotBeforeClaim?
    var iat: IssuedAtClaim?
    var aud: AudienceClaim?
    var iss: IssuerClaim?

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// Checks `Bearer` user tokens against the operator's HS256 key.
///
/// The header must name HS256 (a token that asks for another algorithm, `none` included, is
/// refused before any key is tried) and carry no `crit` extensions (RFC 7515 §4.1.11: a
/// verifier must refuse those it does not understand, and Herald understands none); `nbf` must
/// have passed and `exp` lie at most `maxLifetime` ahead; when the operator configured them,
/// `aud` must contain the expected audience and `iss` must equal the expected issuer.
struct UserTokenVerifier: Sendable {
    static let algorithm = "HS256"

    let keys: JWTKeyCollection
    let leeway: TimeInterval
    var maxLifetime: TimeInterval = TimeInterval(Int32.max)
    var audience: String?
    var issuer: String?

    static func make(
        key: String, leeway: Int, maxLifetime: Int = Int(Int32.max), audience: String? = nil, issuer: String? = nil
    ) async -> UserTokenVerifier {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: key), digestAlgorithm: .sha256)
        return UserTokenVerifier(
            keys: keys, leeway: TimeInterval(leeway), maxLifetime: TimeInterval(maxLifetime), audience: audience, issuer: issuer)
    }

    /// The user id (`sub`) of a valid token, or the 401 that says why it is not valid.
    func userId(of token: Substring, now: Date) async throws(APIError) -> String {
        guard let header = JWTHeader.read(token), let algorithm = header.algorithm else {
            throw .unauthenticated("invalid_user_token", "the Bearer token is not a JWT with a readable header")
        }
        guard !header.hasCriticalExtensions else {
            throw .unauthenticated(
                "invalid_user_token", "the user token names critical header extensions (crit); this hub understands none")
        }
        guard algorithm == Self.algorithm else {
            throw .unauthenticated(
                "invalid_user_token", "the user token is signed with \(algorithm.prefix(20)); this hub accepts \(Self.algorithm) only")
        }
        let claims: UserTokenClaims
        do {
            claims = try await keys.verify(Array(token.utf8), as: UserTokenClaims.self)
        } catch {
            throw .unauthenticated("invalid_user_token", "the Bearer token is not a user token signed with this hub's key")
        }
        guard claims.exp.value.addingTimeInterval(leeway) > now else {
            throw .unauthenticated("token_expired", "the user token expired at \(ISO8601DateFormatter().string(from: claims.exp.value))")
        }
        if let notBefore = claims.nbf?.value, notBefore.addingTimeInterval(-leeway) > now {
            throw .unauthenticated(
                "token_not_yet_valid", "the user token is valid from \(ISO8601DateFormatter().string(from: notBefore)) (nbf)")
        }
        guard claims.exp.value.timeIntervalSince(now) <= maxLifetime else {
            throw .unauthenticated(
                "token_lifetime_too_long",
                "the user token expires at \(ISO8601DateFormatter().string(from: claims.exp.value)), more than \(Int(maxLifetime)) seconds from now; this hub accepts tokens valid for \(Int(maxLifetime)) seconds at most"
            )
        }
        guard !claims.sub.value.isEmpty else {
            throw .unauthenticated("invalid_user_token", "the user token has an empty subject")
        }
        if let audience, !(claims.aud?.value.contains(audience) ?? false) {
            throw .unauthenticated("invalid_user_token", "the user token is not for this hub's audience (aud)")
        }
        if let issuer, claims.iss?.value != issuer {
            throw .unauthenticated("invalid_user_token", "the user token is not from this hub's issuer (iss)")
        }
        return claims.sub.value
    }
}
