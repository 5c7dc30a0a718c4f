import Foundation
import JWTKit

/// Checks `Bearer` user tokens against the operator's HS256 key.
///
/// The header must name HS256 (a token that asks for another algorithm, `none` included, is
/// refused before any key is tried); when the operator configured them, `aud` must contain the
/// expected audience and `iss` must equal the expected issuer.
struct UserTokenVerifier: Sendable {
    static let algorithm = "HS256"

    let keys: JWTKeyCollection
    let leeway: TimeInterval
    var audience: String?
    var issuer: String?

    static func make(key: String, leeway: Int, audience: String? = nil, issuer: String? = nil) async -> UserTokenVerifier {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: key), digestAlgorithm: .sha256)
        return UserTokenVerifier(keys: keys, leeway: TimeInterval(leeway), audience: audience, issuer: issuer)
    }

    /// The user id (`sub`) of a valid token, or the 401 that says why it is not valid.
    func userId(of token: Substring, now: Date) async throws(APIError) -> String {
        guard let algorithm = JWTHeader.algorithm(of: token) else {
            throw .unauthenticated("invalid_user_token", "the Bearer token is not a JWT with a readable header")
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
