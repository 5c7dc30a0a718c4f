import AsyncHTTPClient
import Foundation
import JWTKit
import NIOCore

/// OAuth 2.0 access tokens for FCM HTTP v1, from a service account: an RS256 assertion
/// (`iss` the account, `scope` firebase.messaging, `aud` its `token_uri`, one hour) is
/// exchanged at `token_uri` for an access token, kept until `renewBefore` (5 minutes) ahead
/// of its expiry. Concurrent requests share one exchange.
public actor FCMAccessTokens {
    struct Assertion: JWTPayload {
        var iss: IssuerClaim
        var scope: String
        var aud: AudienceClaim
        var iat: IssuedAtClaim
        var exp: ExpirationClaim
        func verify(using algorithm: some JWTAlgorithm) throws {}
    }

    public static let scope = "https://www.googleapis.com/auth/firebase.messaging"

    private let account: FCMServiceAccount
    private let client: HTTPClient
    private let keys: JWTKeyCollection
    private let renewBefore: TimeInterval
    private var current: (token: String, expiresAt: Date)?
    private var pending: Task<(String, Date), any Error>?
    public private(set) var exchanges = 0

    public init(account: FCMServiceAccount, client: HTTPClient, renewBefore: TimeInterval = 300) async {
        self.account = account
        self.client = client
        self.renewBefore = renewBefore
        let keys = JWTKeyCollection()
        await keys.add(rsa: account.signingKey, digestAlgorithm: .sha256, kid: account.privateKeyId.map { JWKIdentifier(string: $0) })
        self.keys = keys
    }

    /// The access token to send now.
    public func token(now: Date = Date()) async throws -> String {
        if let current, current.expiresAt.timeIntervalSince(now) > renewBefore { return current.token }
        if let pending { return try await pending.value.0 }
        let task = Task { try await self.exchange(now: now) }
        pending = task
        defer { pending = nil }
        let (token, expiresAt) = try await task.value
        current = (token, expiresAt)
        return token
    }

    /// FCM refused `token` (401): the next request exchanges a new assertion.
    public func refused(_ token: String) {
        if current?.token == token { current = nil }
    }

    private func exchange(now: Date) async throws -> (String, Date) {
        exchanges += 1
        let assertion = Assertion(
            iss: IssuerClaim(value: account.clientEmail), scope: Self.scope, aud: AudienceClaim(value: account.tokenURI.absoluteString),
            iat: IssuedAtClaim(value: now), exp: ExpirationClaim(value: now.addingTimeInterval(3600)))
        let signed = try await keys.sign(assertion)
        var request = HTTPClientRequest(url: account.tokenURI.absoluteString)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/x-www-form-urlencoded")
        let form = "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(signed)"
        request.body = .bytes(ByteBuffer(string: form))
        let response = try await client.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 1 << 16)
        let object = (try? JSONSerialization.jsonObject(with: Data(body.readableBytesView))) as? [String: Any]
        guard response.status == .ok, let token = object?["access_token"] as? String else {
            let reason = (object?["error_description"] as? String) ?? (object?["error"] as? String) ?? "HTTP \(response.status.code)"
            throw FCMTokenError(tokenURI: account.tokenURI.absoluteString, source: account.source, reason: reason)
        }
        let lifetime = (object?["expires_in"] as? NSNumber)?.doubleValue ?? 3600
        return (token, now.addingTimeInterval(lifetime))
    }
}

/// The token endpoint refused the service account's assertion.
public struct FCMTokenError: Error, CustomStringConvertible {
    public var tokenURI: String
    public var source: String
    public var reason: String
    public var description: String { "the token endpoint \(tokenURI) refused the service account of \(source): \(reason)" }
}
