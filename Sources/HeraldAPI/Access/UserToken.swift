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
            sub: SubjectClaim(value: user), exp: ExpirationClaim(value: expiry), iat: IssuedAtClaim(value: Date()),
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
    var iat: IssuedAtClaim?
    var aud: AudienceClaim?
    var iss: IssuerClaim?

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
