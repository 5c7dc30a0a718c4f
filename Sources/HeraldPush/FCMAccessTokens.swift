import AsyncHTTPClient
import Foundation
import JWTKit
import NIOCore

/// OAuth 2.0 access tokens for FCM HTTP v1, from a service account: an RS256 assertion
/// (`iss` the account, `scope` firebase.messaging, `aud` its `token_uri`, one hour) is
/// exchanged at `token_uri` for an access token, kept in an ``AccessTokenCache``.
public enum FCMAccessTokens {
    struct Assertion: JWTPayload {
        var iss: IssuerClaim
        var scope: String
        var aud: AudienceClaim
        var iat: IssuedAtClaim
        var exp: ExpirationClaim
        func verify(using algorithm: some JWTAlgorithm) throws {}
    }

    public static let scope = "https://www.googleapis.com/auth/firebase.messaging"

    /// The access tokens of `account`, exchanged through `client`.
    public static func cache(account: FCMServiceAccount, client: HTTPClient, renewBefore: TimeInterval = 300) async -> AccessTokenCache {
        let keys = JWTKeyCollection()
        await keys.add(rsa: account.signingKey, digestAlgorithm: .sha256, kid: account.privateKeyId.map { JWKIdentifier(string: $0) })
        return AccessTokenCache(renewBefore: renewBefore) { now in
            try await exchange(account: account, keys: keys, client: client, now: now)
        }
    }

    static func exchange(account: FCMServiceAccount, keys: JWTKeyCollection, client: HTTPClient, now: Date) async throws -> (
        token: String, expiresAt: Date
    ) {
        let assertion = Assertion(
            iss: IssuerClaim(value: account.clientEmail), scope: Self.scope, aud: AudienceClaim(value: account.tokenURI.absoluteString),
            iat: IssuedAtClaim(value: now), exp: ExpirationClaim(value: now.addingTimeInterval(3600)))
        let signed = try await keys.sign(assertion)
        let form = "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(signed)"
        let (status, object) = try await OAuthForm.post(form, to: account.tokenURI.absoluteString, client: client)
        guard status == 200, let token = object?["access_token"] as? String else {
            throw FCMTokenError(tokenURI: account.tokenURI.absoluteString, source: account.source, reason: OAuthForm.reason(status, object))
        }
        let lifetime = (object?["expires_in"] as? NSNumber)?.doubleValue ?? 3600
        return (token, now.addingTimeInterval(lifetime))
    }
}

/// The token endpoints' shared exchange: a form POSTed, a JSON object answered.
enum OAuthForm {
    static func post(_ form: String, to url: String, client: HTTPClient) async throws -> (status: UInt, object: [String: Any]?) {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/x-www-form-urlencoded")
        request.body = .bytes(ByteBuffer(string: form))
        let response = try await client.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 1 << 16)
        return (response.status.code, (try? JSONSerialization.jsonObject(with: Data(body.readableBytesView))) as? [String: Any])
    }

    /// What a refusal says: `error_description`, `error`, or the status.
    static func reason(_ status: UInt, _ object: [String: Any]?) -> String {
        (object?["error_description"] as? String) ?? (object?["error"] as? String) ?? "HTTP \(status)"
    }

    /// `value` for a form body.
    static func encode(_ value: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value
    }
}

/// The token endpoint refused the service account's assertion.
public struct FCMTokenError: Error, CustomStringConvertible {
    public var tokenURI: String
    public var source: String
    public var reason: String
    public var description: String { "the token endpoint \(tokenURI) refused the service account of \(source): \(reason)" }
}
