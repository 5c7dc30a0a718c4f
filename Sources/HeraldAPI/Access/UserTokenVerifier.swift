import Foundation
import JWTKit

/// Checks `Bearer` user tokens against the operator's HS256 key.
struct UserTokenVerifier: Sendable {
    let keys: JWTKeyCollection
    let leeway: TimeInterval

    static func make(key: String, leeway: Int) async -> UserTokenVerifier {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: key), digestAlgorithm: .sha256)
        return UserTokenVerifier(keys: keys, leeway: TimeInterval(leeway))
    }

    /// The user id (`sub`) of a valid token, or the 401 that says why it is not valid.
    func userId(of token: Substring, now: Date) async throws(APIError) -> String {
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
        return claims.sub.value
    }
}
