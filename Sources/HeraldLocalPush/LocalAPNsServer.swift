import Foundation
import JWTKit
import NIOCore
import Synchronization

/// A local server speaking Apple's APNs provider API (`POST /3/device/{token}`) over HTTP/2
/// and TLS, for tests, the demo and the benchmark.
///
/// It checks provider tokens (ES256, `kid`, `iss`, `iat` within the hour) as Apple does, and
/// the topic, device token and payload; tests can script answers, delay them and drop the
/// connections, and read what was sent.
public final class LocalAPNsServer: Sendable {
    /// A scripted answer.
    public enum Answer: Sendable, Hashable {
        /// 200, as for a valid request.
        case ok
        /// 400 `BadDeviceToken`.
        case badDeviceToken
        /// 410 `Unregistered`, with the time the token stopped being valid.
        case unregistered(at: Date)
        /// 429 `TooManyRequests`, with a `retry-after` header (seconds) when given.
        case tooManyRequests(retryAfter: Int?)
        /// 500 `InternalServerError`.
        case internalServerError
        /// 503 `ServiceUnavailable`.
        case serviceUnavailable
        /// 403 `ExpiredProviderToken`.
        case expiredProviderToken
        /// 403 `InvalidProviderToken`.
        case invalidProviderToken
        /// Any status with `{"reason": reason}`.
        case status(Int, reason: String)
    }

    /// A request the server received (while `recordRequests` is on).
    public struct Request: Sendable {
        /// The device token from the path.
        public var token: String
        /// The request headers, in order (HTTP/2 pseudo-headers excluded).
        public var headers: [(name: String, value: String)]
        /// The payload.
        public var body: [UInt8]
        /// The provider token's `iss` and `iat`, when it could be read.
        public var issuer: String?
        public var issuedAt: Date?
        public var receivedAt: Date
        /// The status answered.
        public var status: Int

        /// The first value of header `name` (case-insensitive).
        public func header(_ name: String) -> String? {
            headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
        }
    }

    /// The largest payload APNs accepts for a regular notification.
    public static let maximumPayloadSize = 4096
    /// How long a provider token is accepted after its `iat`.
    public static let providerTokenLifetime: TimeInterval = 3600

    /// The port on 127.0.0.1.
    public var port: Int { http.port }
    /// "https://127.0.0.1:<port>".
    public var baseURL: String { "https://127.0.0.1:\(port)" }

    private let http: LocalHTTP2Server
    private let routes: Routes

    private init(http: LocalHTTP2Server, routes: Routes) {
        self.http = http
        self.routes = routes
    }

    /// Starts a server on a free port, with a certificate from `authority`, accepting provider
    /// tokens signed with `key` for `topics`.
    public static func start(
        authority: LocalCertificateAuthority,
        key: LocalAPNsKey,
        topics: Set<String>,
        threads: Int = 1
    ) async throws -> LocalAPNsServer {
        let routes = Routes(key: key, topics: topics)
        await routes.keys.add(ecdsa: key.publicKey, kid: JWKIdentifier(string: key.keyId))
        let http = try await LocalHTTP2Server.start(tls: try authority.makeServerTLSConfiguration(), threads: threads) { request in
            await routes.answer(request)
        }
        return LocalAPNsServer(http: http, routes: routes)
    }

    /// Stops the server.
    public func shutdown() async { await http.shutdown() }

    // MARK: Scripting

    /// The next requests for `token` get `answers`, in order; then normal behaviour.
    public func script(token: String, _ answers: [Answer]) { routes.state.withLock { $0.script.script(token: token, answers) } }

    /// The next `count` requests for any token get `answer`.
    public func failNext(_ count: Int, with answer: Answer) { routes.state.withLock { $0.script.failNext(count, with: answer) } }

    /// Every request for `token` gets `answer` (nil: normal behaviour again).
    public func alwaysAnswer(token: String, _ answer: Answer?) { routes.state.withLock { $0.script.alwaysAnswer(token: token, answer) } }

    /// Delays every answer by `duration`.
    public func setDelay(_ duration: Duration) { http.setDelay(duration) }

    /// Closes every open connection abruptly (streams in flight get no answer); returns once closed.
    public func dropConnections() async { await http.dropConnections() }

    // MARK: Observation

    /// Whether requests are recorded for `requests()`; the counters count either way.
    public var recordRequests: Bool {
        get { routes.state.withLock { $0.log.recording } }
        set { routes.state.withLock { $0.log.recording = newValue } }
    }

    /// The requests recorded, oldest first.
    public func requests() -> [Request] { routes.state.withLock { $0.log.records } }

    /// Requests to `/3/device/` received.
    public var requestCount: Int { routes.state.withLock { $0.log.total } }

    /// Requests answered with `status`.
    public func answered(status: Int) -> Int { routes.state.withLock { $0.log.answered(status: status) } }

    /// Connections accepted since the start.
    public var connectionsAccepted: Int { http.connectionsAccepted }

    /// Connections open now.
    public var openConnections: Int { http.openConnections }

    /// Provider tokens whose signature was verified (each distinct token once while cached).
    public var providerTokensVerified: Int { routes.state.withLock { $0.verifications } }

    // MARK: Routes

    private final class Routes: Sendable {
        struct State {
            var script = AnswerScript<Answer>()
            var log = RequestLog<Request>()
            /// Provider tokens already verified, with their claims.
            var verified: [String: Claims] = [:]
            var verifications = 0
        }

        struct Claims: JWTPayload {
            var iss: String?
            var iat: Double?

            func verify(using algorithm: some JWTAlgorithm) async throws {}
        }

        enum Authentication {
            case valid(Claims)
            case missing
            case invalid(Claims?)
            case expired(Claims)
        }

        let key: LocalAPNsKey
        let topics: Set<String>
        let keys = JWTKeyCollection()
        let state = Mutex(State())

        init(key: LocalAPNsKey, topics: Set<String>) {
            self.key = key
            self.topics = topics
        }

        func answer(_ request: LocalHTTPRequest) async -> LocalHTTPResponse {
            let prefix = "/3/device/"
            guard request.path.hasPrefix(prefix) else { return Self.error(404, "BadPath", apnsID: nil) }
            guard request.method == .POST else { return Self.error(405, "MethodNotAllowed", apnsID: nil) }
            let token = String(request.path.dropFirst(prefix.count))
            let apnsID = request.header("apns-id") ?? UUID().uuidString

            let authentication = await authenticate(request.header("authorization"))
            let claims: Claims?
            let response: LocalHTTPResponse
            switch authentication {
            case .missing:
                (claims, response) = (nil, Self.error(403, "MissingProviderToken", apnsID: apnsID))
            case .invalid(let read):
                (claims, response) = (read, Self.error(403, "InvalidProviderToken", apnsID: apnsID))
            case .expired(let read):
                (claims, response) = (read, Self.error(403, "ExpiredProviderToken", apnsID: apnsID))
            case .valid(let read):
                claims = read
                if let failure = validate(request, token: token, apnsID: apnsID) {
                    response = failure
                } else {
                    let scripted = state.withLock { $0.script.next(for: token) }
                    response = Self.response(to: scripted ?? .ok, apnsID: apnsID)
                }
            }

            state.withLock {
                $0.log.add(
                    Request(
                        token: token,
                        headers: request.headers.filter { !$0.name.hasPrefix(":") }.map { (name: $0.name, value: $0.value) },
                        body: Array(request.body.readableBytesView),
                        issuer: claims?.iss,
                        issuedAt: claims?.iat.map { Date(timeIntervalSince1970: $0) },
                        receivedAt: request.receivedAt,
                        status: response.status
                    ),
                    status: response.status
                )
            }
            return response
        }

        /// The topic, device token and payload checks, in Apple's terms.
        private func validate(_ request: LocalHTTPRequest, token: String, apnsID: String) -> LocalHTTPResponse? {
            guard UUID(uuidString: apnsID) != nil else { return Self.error(400, "BadMessageId", apnsID: nil) }
            guard let topic = request.header("apns-topic") else { return Self.error(400, "MissingTopic", apnsID: apnsID) }
            // A Live Activity push names the app's topic with the push type's suffix, and carries
            // the activity's event, content state and timestamp.
            let suffix = ".push-type.liveactivity"
            let liveActivity = request.header("apns-push-type") == "liveactivity"
            guard liveActivity == topic.hasSuffix(suffix) else { return Self.error(400, "InvalidPushType", apnsID: apnsID) }
            guard topics.contains(liveActivity ? String(topic.dropLast(suffix.count)) : topic) else {
                return Self.error(400, "TopicDisallowed", apnsID: apnsID)
            }
            if liveActivity {
                let aps =
                    ((try? JSONSerialization.jsonObject(with: Data(request.body.readableBytesView))) as? [String: Any])?["aps"]
                    as? [String: Any]
                guard let aps, aps["timestamp"] is NSNumber, let event = aps["event"] as? String,
                    ["start", "update", "end"].contains(event),
                    aps["content-state"] is [String: Any], event != "start" || (aps["attributes-type"] is String && aps["alert"] != nil)
                else { return Self.error(400, "BadLiveActivityPayload", apnsID: apnsID) }
            }
            guard !token.isEmpty, token.allSatisfy(\.isHexDigit) else { return Self.error(400, "BadDeviceToken", apnsID: apnsID) }
            guard request.body.readableBytes > 0 else { return Self.error(400, "PayloadEmpty", apnsID: apnsID) }
            guard request.body.readableBytes <= LocalAPNsServer.maximumPayloadSize else {
                return Self.error(413, "PayloadTooLarge", apnsID: apnsID)
            }
            return nil
        }

        /// Checks `authorization: bearer <JWT>`; a token verified once is taken from the cache
        /// until its `iat` is an hour old.
        private func authenticate(_ authorization: String?) async -> Authentication {
            guard let authorization, authorization.lowercased().hasPrefix("bearer ") else { return .missing }
            let token = authorization.dropFirst("bearer ".count).trimmingCharacters(in: .whitespaces)
            guard !token.isEmpty else { return .missing }
            let oldest = Date().timeIntervalSince1970 - LocalAPNsServer.providerTokenLifetime

            if let cached = state.withLock({ $0.verified[token] }) {
                return (cached.iat ?? 0) < oldest ? .expired(cached) : .valid(cached)
            }

            guard let jwt = CompactJWT(token), jwt.header.alg == "ES256", jwt.header.kid == key.keyId else {
                return .invalid(nil)
            }
            let claims: Claims
            do {
                claims = try await keys.verify(token, as: Claims.self)
            } catch {
                return .invalid(nil)
            }
            guard claims.iss == key.teamId, let iat = claims.iat else { return .invalid(claims) }
            guard iat >= oldest else { return .expired(claims) }
            state.withLock { state in
                state.verifications += 1
                if state.verified.count >= 10_000 { state.verified = state.verified.filter { ($0.value.iat ?? 0) >= oldest } }
                state.verified[token] = claims
            }
            return .valid(claims)
        }

        static func response(to answer: Answer, apnsID: String) -> LocalHTTPResponse {
            switch answer {
            case .ok:
                return LocalHTTPResponse(status: 200, headers: [("apns-id", apnsID)])
            case .badDeviceToken:
                return error(400, "BadDeviceToken", apnsID: apnsID)
            case .unregistered(let at):
                let milliseconds = Int((at.timeIntervalSince1970 * 1000).rounded())
                return .json(410, ["reason": "Unregistered", "timestamp": milliseconds], headers: [("apns-id", apnsID)])
            case .tooManyRequests(let retryAfter):
                let headers = retryAfter.map { [("retry-after", String($0))] } ?? []
                return error(429, "TooManyRequests", apnsID: apnsID, headers: headers)
            case .internalServerError:
                return error(500, "InternalServerError", apnsID: apnsID)
            case .serviceUnavailable:
                return error(503, "ServiceUnavailable", apnsID: apnsID)
            case .expiredProviderToken:
                return error(403, "ExpiredProviderToken", apnsID: apnsID)
            case .invalidProviderToken:
                return error(403, "InvalidProviderToken", apnsID: apnsID)
            case .status(let status, let reason):
                return error(status, reason, apnsID: apnsID)
            }
        }

        static func error(_ status: Int, _ reason: String, apnsID: String?, headers: [(String, String)] = []) -> LocalHTTPResponse {
            .json(status, ["reason": reason], headers: (apnsID.map { [("apns-id", $0)] } ?? []) + headers)
        }
    }
}
