import Crypto
import Foundation
import NIOCore
import Synchronization

/// A local Web Push service (RFC 8030) over HTTP/2 and TLS, playing both the push service and
/// its browsers: `subscribe()` makes a browser's subscription (its own P-256 key pair and auth
/// secret, as `pushManager.subscribe` would), and every message posted to a subscription's
/// endpoint is checked as a strict push service would and then decrypted with the browser's
/// private key (RFC 8291), so a test reads the plaintext the browser would show.
///
/// Checks, each answered as the deployed services do: the VAPID token (RFC 8292: `vapid t=…,
/// k=…`, `k` the application server key the subscriptions were made with, an ES256 signature,
/// `aud` this origin, `exp` in the future and at most 24 hours away, a `mailto:` or `https:`
/// `sub`; 401 when absent, 403 when wrong), `TTL` present (400), `Content-Encoding: aes128gcm`
/// (400), `Urgency` and `Topic` well formed (400), a body of at most 4,096 bytes (413), a known
/// subscription (410). Stricter than a real service: a body the browser could not decrypt is
/// answered 400 here (a real service would accept it and the browser drop it), so a broken
/// encryption fails the test that sent it.
public final class LocalWebPushServer: Sendable {
    /// A scripted answer.
    public enum Answer: Sendable, Hashable {
        /// 201, as for a valid request.
        case created
        /// 410: the browser unsubscribed.
        case gone
        /// 404: the subscription expired.
        case notFound
        /// 413: the payload is too large.
        case tooLarge
        /// 429 with `retry-after` (seconds) when given.
        case tooManyRequests(retryAfter: Int?)
        /// 503.
        case unavailable
    }

    /// A browser's subscription as the page would hand it to its server, with the private key
    /// only the browser has.
    public struct Subscription: Sendable {
        public let id: String
        public let endpoint: String
        /// `keys.p256dh`, base64url.
        public let p256dh: String
        /// `keys.auth`, base64url.
        public let auth: String

        /// `endpoint#p256dh=…&auth=…`: the handle of a Herald web push registration.
        public var handle: String { "\(endpoint)#p256dh=\(p256dh)&auth=\(auth)" }
        /// The subscription as `PushSubscription.toJSON()` gives it.
        public var json: [String: any Sendable] {
            ["endpoint": endpoint, "expirationTime": NSNull(), "keys": ["p256dh": p256dh, "auth": auth]]
        }
    }

    /// A message the service received (while `recordRequests` is on).
    public struct Request: Sendable {
        public var subscriptionId: String
        /// The request headers, in order (HTTP/2 pseudo-headers excluded).
        public var headers: [(name: String, value: String)]
        /// The decrypted payload (nil when the request was refused before decryption or could
        /// not be decrypted).
        public var plaintext: [UInt8]?
        public var bodyBytes: Int
        public var receivedAt: Date
        public var status: Int

        public func header(_ name: String) -> String? {
            headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
        }
    }

    public var port: Int { http.port }
    /// "https://127.0.0.1:<port>": the origin of every endpoint, the `aud` of its VAPID tokens.
    public var origin: String { "https://127.0.0.1:\(port)" }

    private let http: LocalHTTP2Server
    private let routes: Routes

    private init(http: LocalHTTP2Server, routes: Routes) {
        self.http = http
        self.routes = routes
    }

    /// Starts a service on a free port with a certificate from `authority`, accepting VAPID tokens
    /// signed by the key whose public half is `applicationServerKey` (65 bytes, uncompressed).
    public static func start(authority: LocalCertificateAuthority, applicationServerKey: [UInt8], threads: Int = 1) async throws
        -> LocalWebPushServer
    {
        let routes = try Routes(applicationServerKey: applicationServerKey)
        let http = try await LocalHTTP2Server.start(tls: try authority.makeServerTLSConfiguration(), threads: threads) { request in
            routes.answer(request)
        }
        routes.origin.withLock { $0 = "https://127.0.0.1:\(http.port)" }
        return LocalWebPushServer(http: http, routes: routes)
    }

    public func shutdown() async { await http.shutdown() }

    /// A new browser subscription on this service.
    public func subscribe() -> Subscription {
        let id = randomHex(bytes: 12)
        let key = P256.KeyAgreement.PrivateKey()
        let auth = (0..<16).map { _ in UInt8.random(in: 0...255) }
        routes.state.withLock { $0.browsers[id] = Routes.Browser(key: key, auth: auth) }
        return Subscription(
            id: id, endpoint: "\(origin)/push/\(id)", p256dh: Self.base64URL(Array(key.publicKey.x963Representation)),
            auth: Self.base64URL(auth))
    }

    /// The browser of `id` unsubscribes: its endpoint answers 410 from now on.
    public func unsubscribe(_ id: String) { _ = routes.state.withLock { $0.browsers.removeValue(forKey: id) } }

    // MARK: Scripting

    public func script(subscription id: String, _ answers: [Answer]) { routes.state.withLock { $0.script.script(token: id, answers) } }
    public func failNext(_ count: Int, with answer: Answer) { routes.state.withLock { $0.script.failNext(count, with: answer) } }
    public func setDelay(_ duration: Duration) { http.setDelay(duration) }

    // MARK: Observation

    public var recordRequests: Bool {
        get { routes.state.withLock { $0.log.recording } }
        set { routes.state.withLock { $0.log.recording = newValue } }
    }

    public func requests() -> [Request] { routes.state.withLock { $0.log.records } }
    public var requestCount: Int { routes.state.withLock { $0.log.total } }
    public func answered(status: Int) -> Int { routes.state.withLock { $0.log.answered(status: status) } }
    public var connectionsAccepted: Int { http.connectionsAccepted }
    /// VAPID tokens seen, distinct (a sender reuses one per origin until it nears expiry).
    public var distinctTokens: Int { routes.state.withLock { $0.tokensSeen.count } }

    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    // MARK: Routes

    private final class Routes: Sendable {
        struct Browser: Sendable {
            var key: P256.KeyAgreement.PrivateKey
            var auth: [UInt8]
        }

        struct State {
            var browsers: [String: Browser] = [:]
            var script = AnswerScript<Answer>()
            var log = RequestLog<Request>()
            var tokensSeen: Set<String> = []
        }

        let applicationServerKey: [UInt8]
        let verifyingKey: P256.Signing.PublicKey
        let state = Mutex(State())
        let origin = Mutex("")

        init(applicationServerKey: [UInt8]) throws {
            self.applicationServerKey = applicationServerKey
            verifyingKey = try P256.Signing.PublicKey(x963Representation: applicationServerKey)
        }

        func answer(_ request: LocalHTTPRequest) -> LocalHTTPResponse {
            let prefix = "/push/"
            guard request.path.hasPrefix(prefix) else { return Self.error(404, "no such push resource") }
            guard request.method == .POST else { return Self.error(405, "push messages are POSTed") }
            let id = String(request.path.dropFirst(prefix.count))
            var plaintext: [UInt8]?
            let response = receive(request, id: id, plaintext: &plaintext)
            state.withLock {
                $0.log.add(
                    Request(
                        subscriptionId: id,
                        headers: request.headers.filter { !$0.name.hasPrefix(":") }.map { (name: $0.name, value: $0.value) },
                        plaintext: plaintext, bodyBytes: request.body.readableBytes, receivedAt: request.receivedAt, status: response.status
                    ),
                    status: response.status)
            }
            return response
        }

        private func receive(_ request: LocalHTTPRequest, id: String, plaintext: inout [UInt8]?) -> LocalHTTPResponse {
            if let refusal = checkAuthorization(request) { return refusal }
            guard let ttl = request.header("ttl"), !ttl.isEmpty, ttl.allSatisfy(\.isASCII), ttl.allSatisfy(\.isNumber) else {
                return Self.error(400, "TTL is required: a number of seconds")
            }
            guard request.header("content-encoding")?.lowercased() == "aes128gcm" else {
                return Self.error(400, "Content-Encoding must be aes128gcm")
            }
            if let urgency = request.header("urgency"), !["very-low", "low", "normal", "high"].contains(urgency) {
                return Self.error(400, "Urgency must be very-low, low, normal or high")
            }
            if let topic = request.header("topic"),
                topic.isEmpty || topic.utf8.count > 32
                    || !topic.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
            {
                return Self.error(400, "Topic must be at most 32 URL-safe base64 characters")
            }
            guard request.body.readableBytes <= 4096 else { return Self.error(413, "the payload is larger than 4096 bytes") }
            guard let browser = state.withLock({ $0.browsers[id] }) else { return Self.error(410, "the subscription is gone") }
            if let scripted = state.withLock({ $0.script.next(for: id) }) {
                switch scripted {
                case .created: break
                case .gone: return Self.error(410, "the subscription is gone")
                case .notFound: return Self.error(404, "the subscription expired")
                case .tooLarge: return Self.error(413, "the payload is too large")
                case .tooManyRequests(let retryAfter):
                    var response = Self.error(429, "too many requests")
                    if let retryAfter { response.headers.append(("retry-after", String(retryAfter))) }
                    return response
                case .unavailable: return Self.error(503, "the service is unavailable")
                }
            }
            switch Self.decrypt(Array(request.body.readableBytesView), browser: browser) {
            case .success(let text): plaintext = text
            case .failure(let problem): return Self.error(400, "the browser could not decrypt the message: \(problem.reason)")
            }
            return LocalHTTPResponse(status: 201, headers: [("location", "\(origin.withLock { $0 })/message/\(randomHex(bytes: 8))")])
        }

        /// The VAPID check of RFC 8292; nil when the request is authorized.
        private func checkAuthorization(_ request: LocalHTTPRequest) -> LocalHTTPResponse? {
            guard let header = request.header("authorization"), header.lowercased().hasPrefix("vapid ") else {
                return Self.error(401, "a VAPID Authorization header is required")
            }
            var parameters: [String: String] = [:]
            for part in header.dropFirst("vapid ".count).split(separator: ",") {
                let pair = part.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
                if pair.count == 2 { parameters[String(pair[0]).lowercased()] = String(pair[1]) }
            }
            guard let token = parameters["t"], let key = parameters["k"] else { return Self.error(401, "vapid needs t= and k=") }
            guard CompactJWT.base64URLDecoded(key).map(Array.init) == applicationServerKey else {
                return Self.error(403, "k is not the application server key the subscription was made with")
            }
            let parts = token.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 3, let jwt = CompactJWT(token), jwt.header.alg == "ES256",
                let signatureBytes = CompactJWT.base64URLDecoded(parts[2]),
                let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes),
                verifyingKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8))
            else { return Self.error(403, "the VAPID token's ES256 signature does not verify") }
            guard let claims = (try? JSONSerialization.jsonObject(with: jwt.payload)) as? [String: Any] else {
                return Self.error(403, "the VAPID token's claims are not a JSON object")
            }
            let expected = origin.withLock { $0 }
            guard claims["aud"] as? String == expected else { return Self.error(403, "aud must be \(expected)") }
            let now = Date().timeIntervalSince1970
            guard let exp = (claims["exp"] as? NSNumber)?.doubleValue, exp > now, exp <= now + 24 * 3600 else {
                return Self.error(403, "exp must be in the future and at most 24 hours away")
            }
            guard let sub = claims["sub"] as? String, sub.hasPrefix("mailto:") || sub.hasPrefix("https://") else {
                return Self.error(403, "sub must be a mailto: or https: contact")
            }
            _ = state.withLock { $0.tokensSeen.insert(token) }
            return nil
        }

        struct Undecryptable: Error {
            var reason: String
        }

        /// The browser's side of RFC 8291: the key agreement with the sender's key from the
        /// header, the same derivations, then the record opened and its padding checked.
        static func decrypt(_ body: [UInt8], browser: Browser) -> Result<[UInt8], Undecryptable> {
            guard body.count > 86 + 16 else { return .failure(Undecryptable(reason: "shorter than a header and a tag")) }
            let salt = Array(body[0..<16])
            let keyIdLength = Int(body[20])
            guard keyIdLength == 65, body.count > 21 + keyIdLength + 16 else {
                return .failure(Undecryptable(reason: "the key id is \(keyIdLength) bytes, not a 65-byte public key"))
            }
            let senderPublic = Array(body[21..<(21 + keyIdLength)])
            do {
                let senderKey = try P256.KeyAgreement.PublicKey(x963Representation: senderPublic)
                let shared = try browser.key.sharedSecretFromKeyAgreement(with: senderKey)
                let browserPublic = Array(browser.key.publicKey.x963Representation)
                let info = Array("WebPush: info".utf8) + [0] + browserPublic + senderPublic
                let ikm = shared.hkdfDerivedSymmetricKey(using: SHA256.self, salt: browser.auth, sharedInfo: info, outputByteCount: 32)
                let cek = HKDF<SHA256>.deriveKey(
                    inputKeyMaterial: ikm, salt: salt, info: Array("Content-Encoding: aes128gcm".utf8) + [0], outputByteCount: 16)
                let nonce = HKDF<SHA256>.deriveKey(
                    inputKeyMaterial: ikm, salt: salt, info: Array("Content-Encoding: nonce".utf8) + [0], outputByteCount: 12)
                let record = body[(21 + keyIdLength)...]
                let box = try AES.GCM.SealedBox(
                    nonce: try nonce.withUnsafeBytes { try AES.GCM.Nonce(data: $0) }, ciphertext: record.dropLast(16),
                    tag: record.suffix(16))
                var padded = Array(try AES.GCM.open(box, using: cek))
                while padded.last == 0 { padded.removeLast() }
                guard padded.last == 0x02 else { return .failure(Undecryptable(reason: "the last record's delimiter is not 0x02")) }
                padded.removeLast()
                return .success(padded)
            } catch {
                return .failure(Undecryptable(reason: "\(error)"))
            }
        }

        static func error(_ status: Int, _ message: String) -> LocalHTTPResponse {
            .json(status, ["code": status, "message": message])
        }
    }
}
