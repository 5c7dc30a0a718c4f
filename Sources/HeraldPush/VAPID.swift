import Crypto
import Foundation
import HeraldDomain
import JWTKit
import Synchronization

/// An application server's VAPID identity (RFC 8292): the long-lived P-256 signing key whose
/// public half browsers were subscribed with (`applicationServerKey`), and the contact URI the
/// push services may use (`sub`: `mailto:` or `https:`).
public struct VAPIDCredentials: Sendable {
    public let signingKey: P256.Signing.PrivateKey
    public let subject: String

    /// The public key as browsers take it for `applicationServerKey`, and as `k=` carries it:
    /// the uncompressed point, base64url.
    public var publicKey: String { Base64URL.encode(signingKey.publicKey.x963Representation) }

    /// - Parameters:
    ///   - privateKey: the 32-byte private scalar in base64url (what `web-push generate-vapid-keys`
    ///     prints), or a PEM `PRIVATE KEY` / `EC PRIVATE KEY` block.
    ///   - subject: `mailto:` an address, or an `https:` URL; push services (Apple's among them)
    ///     refuse tokens without a well-formed one.
    public static func make(privateKey: String, subject: String, source: String) throws(PushConfigurationError) -> VAPIDCredentials {
        let key: P256.Signing.PrivateKey
        let text = privateKey.trimmingCharacters(in: .whitespacesAndNewlines)
        do {
            if text.hasPrefix("-----BEGIN") {
                key = try P256.Signing.PrivateKey(pemRepresentation: text)
            } else if let scalar = Base64URL.decode(text), scalar.count == 32 {
                key = try P256.Signing.PrivateKey(rawRepresentation: scalar)
            } else {
                throw PushConfigurationError(
                    source: source, field: "private key", problem: "not a 32-byte base64url P-256 private key or a PEM block")
            }
        } catch let error as PushConfigurationError {
            throw error
        } catch {
            throw PushConfigurationError(source: source, field: "private key", problem: "not a P-256 private key")
        }
        let contact = subject.trimmingCharacters(in: .whitespaces)
        let isMail = contact.hasPrefix("mailto:") && contact.dropFirst(7).contains("@") && !contact.contains(" ") && !contact.contains("<")
        let isWeb = URLComponents(string: contact).map { $0.scheme == "https" && $0.host?.isEmpty == false } ?? false
        guard isMail || isWeb else {
            throw PushConfigurationError(
                source: source, field: "subject", problem: "\"\(contact)\" is neither mailto:<address> nor an https:// URL")
        }
        return VAPIDCredentials(signingKey: key, subject: contact)
    }
}

/// The VAPID tokens of one application server: one ES256 JWT per push service origin (its `aud`),
/// valid `lifetime` (12 hours; RFC 8292 allows at most 24) and reused until `renewAfter` (11
/// hours), or until the service refused it (401/403). Push services cache a token's signature
/// check, so reusing it is cheaper for both sides than signing per message.
public final class VAPIDTokens: Sendable {
    struct Claims: JWTPayload {
        var aud: AudienceClaim
        var exp: ExpirationClaim
        var sub: SubjectClaim
        func verify(using algorithm: some JWTAlgorithm) throws {}
    }

    struct Token: Sendable {
        var header: String
        var issuedAt: Date
    }

    public let credentials: VAPIDCredentials
    public let lifetime: TimeInterval
    public let renewAfter: TimeInterval
    private let keys: JWTKeyCollection
    private let tokens = Mutex<[String: Token]>([:])
    private let made = Atomic<Int>(0)

    public init(credentials: VAPIDCredentials, lifetime: TimeInterval = 12 * 3600, renewAfter: TimeInterval = 11 * 3600) async throws {
        self.credentials = credentials
        self.lifetime = lifetime
        self.renewAfter = renewAfter
        keys = JWTKeyCollection()
        await keys.add(ecdsa: try ES256PrivateKey(backing: credentials.signingKey))
    }

    /// Tokens signed so far (tests, metrics).
    public var tokensMade: Int { made.load(ordering: .relaxed) }

    /// The `Authorization` value for a request to `origin`: `vapid t=<JWT>, k=<public key>`.
    /// Origins are few (one per push service), so tokens are kept per origin without bound.
    public func authorization(origin: String, now: Date = Date()) async throws -> String {
        if let held = tokens.withLock({ $0[origin] }), now.timeIntervalSince(held.issuedAt) < renewAfter { return held.header }
        let expiry = Date(timeIntervalSince1970: (now.timeIntervalSince1970 + lifetime).rounded(.down))
        let claims = Claims(
            aud: AudienceClaim(value: origin), exp: ExpirationClaim(value: expiry), sub: SubjectClaim(value: credentials.subject))
        let jwt = try await keys.sign(claims)
        made.add(1, ordering: .relaxed)
        let header = "vapid t=\(jwt), k=\(credentials.publicKey)"
        return tokens.withLock { tokens in
            // Calls that missed together each signed one: the first stored is what all send.
            if let held = tokens[origin], now.timeIntervalSince(held.issuedAt) < renewAfter { return held.header }
            tokens[origin] = Token(header: header, issuedAt: now)
            return header
        }
    }

    /// The service at `origin` refused `header`: sign a new one next time.
    public func refused(_ header: String, origin: String) {
        tokens.withLock { tokens in
            if tokens[origin]?.header == header { tokens[origin] = nil }
        }
    }
}
