import Foundation
import JWTKit
import NIOCore
import Synchronization

/// A local server speaking Google's FCM HTTP v1 API (`POST /v1/projects/{project}/messages:send`)
/// and the OAuth 2 token endpoint of a service account (`POST /token`), over HTTP/2 and TLS.
///
/// The token endpoint checks the RS256 assertion as Google does and issues access tokens; the
/// send endpoint accepts only those tokens. Tests can script answers, delay them, expire the
/// access tokens and drop the connections, and read what was sent.
public final class LocalFCMServer: Sendable {
    /// A scripted answer.
    public enum Answer: Sendable, Hashable {
        /// 200, as for a valid request.
        case ok
        /// 404 `NOT_FOUND`, error code `UNREGISTERED`.
        case unregistered
        /// 400 `INVALID_ARGUMENT`, error code `INVALID_ARGUMENT`.
        case invalidArgument
        /// 429 `RESOURCE_EXHAUSTED`, error code `QUOTA_EXCEEDED`, with `retry-after` (seconds) when given.
        case quotaExceeded(retryAfter: Int?)
        /// 503 `UNAVAILABLE`.
        case unavailable
        /// 500 `INTERNAL`.
        case `internal`
        /// 403 `PERMISSION_DENIED`, error code `SENDER_ID_MISMATCH`.
        case senderIdMismatch
        /// Any status, with Google's error shape and an FCM error code when given.
        case status(Int, status: String, errorCode: String?)
    }

    /// A send request the server received (while `recordRequests` is on).
    public struct Request: Sendable {
        /// The registration token of `message.token`, when there is one.
        public var token: String?
        /// The project from the path.
        public var project: String
        /// The request headers, in order (HTTP/2 pseudo-headers excluded).
        public var headers: [(name: String, value: String)]
        /// The JSON body.
        public var body: [UInt8]
        public var receivedAt: Date
        /// The status answered.
        public var status: Int

        /// The first value of header `name` (case-insensitive).
        public func header(_ name: String) -> String? {
            headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
        }
    }

    /// The scope an assertion must ask for.
    public static let messagingScope = "https://www.googleapis.com/auth/firebase.messaging"

    /// The port on 127.0.0.1.
    public var port: Int { http.port }
    /// "https://127.0.0.1:<port>".
    public var baseURL: String { "https://127.0.0.1:\(port)" }
    /// The token endpoint, `baseURL + "/token"`: the service account's `token_uri`.
    public var tokenURI: String { baseURL + "/token" }

    private let http: LocalHTTP2Server
    private let routes: Routes

    private init(http: LocalHTTP2Server, routes: Routes) {
        self.http = http
        self.routes = routes
    }

    /// Starts a server on a free port, with a certificate from `authority`, issuing access tokens
    /// to `account` and accepting messages for `projectId` (the account's project when nil).
    public static func start(
        authority: LocalCertificateAuthority,
        account: LocalServiceAccount,
        projectId: String? = nil,
        threads: Int = 1
    ) async throws -> LocalFCMServer {
        let routes = Routes()
        await routes.add(account, projectId: projectId ?? account.projectId)
        let http = try await LocalHTTP2Server.start(tls: try authority.makeServerTLSConfiguration(), threads: threads) { request in
            await routes.answer(request)
        }
        routes.tokenURI.withLock { $0 = "https://127.0.0.1:\(http.port)/token" }
        return LocalFCMServer(http: http, routes: routes)
    }

    /// Stops the server.
    public func shutdown() async { await http.shutdown() }

    /// Issues access tokens to `account` too, good for messages of its own project only (as
    /// Google's are): a second Firebase project on the same server.
    public func addAccount(_ account: LocalServiceAccount) async { await routes.add(account, projectId: account.projectId) }

    // MARK: Scripting

    /// The next sends to `token` get `answers`, in order; then normal behaviour.
    public func script(token: String, _ answers: [Answer]) { routes.state.withLock { $0.script.script(token: token, answers) } }

    /// The next `count` sends to any token get `answer`.
    public func failNext(_ count: Int, with answer: Answer) { routes.state.withLock { $0.script.failNext(count, with: answer) } }

    /// Every send to `token` gets `answer` (nil: normal behaviour again).
    public func alwaysAnswer(token: String, _ answer: Answer?) { routes.state.withLock { $0.script.alwaysAnswer(token: token, answer) } }

    /// Delays every answer (token requests too) by `duration`.
    public func setDelay(_ duration: Duration) { http.setDelay(duration) }

    /// Closes every open connection abruptly (streams in flight get no answer); returns once closed.
    public func dropConnections() async { await http.dropConnections() }

    /// Every access token issued so far becomes invalid: sends answer 401 until the client
    /// fetches a new one.
    public func expireAccessTokens() { routes.state.withLock { $0.accessTokens.removeAll() } }

    /// The lifetime (`expires_in`) of the access tokens issued from now on; 3600 by default.
    public func setAccessTokenLifetime(seconds: Int) { routes.state.withLock { $0.accessTokenLifetime = seconds } }

    // MARK: Observation

    /// Whether send requests are recorded for `requests()`; the counters count either way.
    public var recordRequests: Bool {
        get { routes.state.withLock { $0.log.recording } }
        set { routes.state.withLock { $0.log.recording = newValue } }
    }

    /// The send requests recorded, oldest first.
    public func requests() -> [Request] { routes.state.withLock { $0.log.records } }

    /// Send requests received (token requests not included).
    public var requestCount: Int { routes.state.withLock { $0.log.total } }

    /// Send requests answered with `status`.
    public func answered(status: Int) -> Int { routes.state.withLock { $0.log.answered(status: status) } }

    /// Access tokens issued by the token endpoint.
    public var tokensIssued: Int { routes.state.withLock { $0.tokensIssued } }

    /// Token requests refused (400).
    public var tokenRequestsRefused: Int { routes.state.withLock { $0.tokensRefused } }

    /// An access token for `project`, issued directly rather than for a signed assertion: for a
    /// load generator (h2load) that sends as the sender does but cannot sign.
    public func issueAccessToken(project: String) -> String {
        let token = "ya29.local-" + randomHex(bytes: 24)
        routes.state.withLock { $0.accessTokens[token] = (Date().addingTimeInterval(TimeInterval($0.accessTokenLifetime)), project) }
        return token
    }

    /// Connections accepted since the start.
    public var connectionsAccepted: Int { http.connectionsAccepted }

    /// Connections open now.
    public var openConnections: Int { http.openConnections }

    // MARK: Routes

    private final class Routes: Sendable {
        struct State {
            var script = AnswerScript<Answer>()
            var log = RequestLog<Request>()
            /// Access tokens issued, with the time they expire.
            /// Each access token's expiry and the project it may send for.
            var accessTokens: [String: (expiry: Date, project: String)] = [:]
            /// The service accounts by key id, with the project each may send for.
            var accounts: [String: (account: LocalServiceAccount, project: String, keys: JWTKeyCollection)] = [:]
            var accessTokenLifetime = 3600
            var tokensIssued = 0
            var tokensRefused = 0
        }

        struct AssertionClaims: JWTPayload {
            var iss: String?
            var aud: AudienceClaim?
            var scope: String?
            var iat: Double?
            var exp: Double?

            func verify(using algorithm: some JWTAlgorithm) async throws {}
        }

        let state = Mutex(State())
        /// Known once the server listens.
        let tokenURI = Mutex("")

        func add(_ account: LocalServiceAccount, projectId: String) async {
            // A collection of its own: the account's assertions are checked with its key only.
            let keys = JWTKeyCollection()
            await keys.add(rsa: account.publicKey, digestAlgorithm: .sha256, kid: JWKIdentifier(string: account.privateKeyId))
            state.withLock { $0.accounts[account.privateKeyId] = (account, projectId, keys) }
        }

        func answer(_ request: LocalHTTPRequest) async -> LocalHTTPResponse {
            if request.path == "/token" {
                guard request.method == .POST else { return Self.googleError(405, "Method not allowed.", "INVALID_ARGUMENT") }
                let response = await issueToken(request)
                state.withLock {
                    if response.status == 200 { $0.tokensIssued += 1 } else { $0.tokensRefused += 1 }
                }
                return response
            }
            let prefix = "/v1/projects/"
            let suffix = "/messages:send"
            guard request.path.hasPrefix(prefix), request.path.hasSuffix(suffix),
                request.path.count > prefix.count + suffix.count
            else { return Self.googleError(404, "Requested entity was not found.", "NOT_FOUND") }
            guard request.method == .POST else { return Self.googleError(405, "Method not allowed.", "INVALID_ARGUMENT") }
            let project = String(request.path.dropFirst(prefix.count).dropLast(suffix.count))
            let token = Self.registrationToken(in: request.body)
            let response = send(request, project: project, token: token)
            state.withLock {
                $0.log.add(
                    Request(
                        token: token,
                        project: project,
                        headers: request.headers.filter { !$0.name.hasPrefix(":") }.map { (name: $0.name, value: $0.value) },
                        body: Array(request.body.readableBytesView),
                        receivedAt: request.receivedAt,
                        status: response.status
                    ),
                    status: response.status
                )
            }
            return response
        }

        // MARK: messages:send

        private func send(_ request: LocalHTTPRequest, project: String, token: String?) -> LocalHTTPResponse {
            guard let authorization = request.header("authorization"), authorization.lowercased().hasPrefix("bearer ") else {
                return Self.unauthenticated
            }
            let accessToken = authorization.dropFirst("bearer ".count).trimmingCharacters(in: .whitespaces)
            let now = Date()
            guard let issued = state.withLock({ $0.accessTokens[accessToken] }), issued.expiry > now else { return Self.unauthenticated }
            guard project == issued.project else {
                return Self.googleError(
                    403,
                    "Permission 'cloudmessaging.messages.create' denied on resource '//cloudresourcemanager.googleapis.com/projects/\(project)' (or it may not exist).",
                    "PERMISSION_DENIED"
                )
            }
            guard let token, !token.isEmpty else {
                return Self.googleError(400, "Recipient of the message is not set.", "INVALID_ARGUMENT", errorCode: "INVALID_ARGUMENT")
            }
            let scripted = state.withLock { $0.script.next(for: token) }
            return Self.response(to: scripted ?? .ok, project: project)
        }

        /// `message.token` of a JSON body, if any.
        static func registrationToken(in body: ByteBuffer) -> String? {
            guard let object = try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any],
                let message = object["message"] as? [String: Any]
            else { return nil }
            return message["token"] as? String
        }

        static func response(to answer: Answer, project: String = "") -> LocalHTTPResponse {
            switch answer {
            case .ok:
                let id = "0:\(Int(Date().timeIntervalSince1970 * 1_000_000))%\(randomHex(bytes: 8))"
                return .json(200, ["name": "projects/\(project)/messages/\(id)"])
            case .unregistered:
                return googleError(404, "Requested entity was not found.", "NOT_FOUND", errorCode: "UNREGISTERED")
            case .invalidArgument:
                return googleError(
                    400, "The registration token is not a valid FCM registration token", "INVALID_ARGUMENT", errorCode: "INVALID_ARGUMENT")
            case .quotaExceeded(let retryAfter):
                return googleError(
                    429,
                    "Quota exceeded for quota metric 'Send requests' of service 'fcm.googleapis.com'.",
                    "RESOURCE_EXHAUSTED",
                    errorCode: "QUOTA_EXCEEDED",
                    headers: retryAfter.map { [("retry-after", String($0))] } ?? []
                )
            case .unavailable:
                return googleError(503, "The service is currently unavailable.", "UNAVAILABLE", errorCode: "UNAVAILABLE")
            case .internal:
                return googleError(500, "Internal error encountered.", "INTERNAL", errorCode: "INTERNAL")
            case .senderIdMismatch:
                return googleError(403, "SenderId mismatch", "PERMISSION_DENIED", errorCode: "SENDER_ID_MISMATCH")
            case .status(let code, let status, let errorCode):
                return googleError(code, "Scripted answer \(code) \(status).", status, errorCode: errorCode)
            }
        }

        static let unauthenticated = googleError(
            401,
            "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.",
            "UNAUTHENTICATED"
        )

        /// `{"error":{"code":…,"message":…,"status":…,"details":[{"@type":…FcmError,"errorCode":…}]}}`.
        static func googleError(
            _ code: Int,
            _ message: String,
            _ status: String,
            errorCode: String? = nil,
            headers: [(String, String)] = []
        ) -> LocalHTTPResponse {
            var error: [String: any Sendable] = ["code": code, "message": message, "status": status]
            if let errorCode {
                error["details"] = [["@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": errorCode]]
            }
            return .json(code, ["error": error], headers: headers)
        }

        // MARK: token

        /// The JWT-bearer grant: checks the assertion and issues an access token.
        private func issueToken(_ request: LocalHTTPRequest) async -> LocalHTTPResponse {
            let form = Self.formFields(request.body)
            let grantType = "urn:ietf:params:oauth:grant-type:jwt-bearer"
            guard form["grant_type"] == grantType else {
                return .json(
                    400, ["error": "unsupported_grant_type", "error_description": "Invalid grant_type: \(form["grant_type"] ?? "")"])
            }
            guard let assertion = form["assertion"], let jwt = CompactJWT(assertion) else {
                return Self.invalidGrant("Invalid JWT: the assertion is missing or malformed.")
            }
            // The account by the key id, or (an assertion need not name its key) by the issuer.
            let issuer = (try? JSONDecoder().decode(AssertionClaims.self, from: jwt.payload))?.iss
            let known = state.withLock { state in
                jwt.header.kid.flatMap { state.accounts[$0] } ?? state.accounts.values.first { $0.account.clientEmail == issuer }
            }
            guard jwt.header.alg == "RS256", let (account, project, keys) = known else {
                return Self.invalidGrant("Invalid JWT Signature.")
            }
            let claims: AssertionClaims
            do {
                claims = try await keys.verify(assertion, as: AssertionClaims.self)
            } catch {
                return Self.invalidGrant("Invalid JWT Signature.")
            }
            guard claims.iss == account.clientEmail else { return Self.invalidGrant("Invalid JWT: unknown issuer \(claims.iss ?? "")") }
            let tokenURI = self.tokenURI.withLock { $0 }
            guard let audience = claims.aud?.value, audience.contains(tokenURI) else {
                return Self.invalidGrant("Invalid JWT: Failed audience check. The expected value was \(tokenURI).")
            }
            guard let scope = claims.scope, scope.split(separator: " ").contains(Substring(LocalFCMServer.messagingScope)) else {
                return Self.invalidGrant("Invalid JWT: the scope does not include \(LocalFCMServer.messagingScope).")
            }
            let now = Date().timeIntervalSince1970
            guard let iat = claims.iat, let exp = claims.exp, exp > now, exp - iat <= 3600, exp > iat else {
                return Self.invalidGrant(
                    "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim."
                )
            }
            let accessToken = "ya29.local-" + randomHex(bytes: 24)
            let lifetime = state.withLock { state in
                let lifetime = state.accessTokenLifetime
                let expiry = Date().addingTimeInterval(TimeInterval(lifetime))
                if state.accessTokens.count >= 10_000 { state.accessTokens = state.accessTokens.filter { $0.value.expiry > Date() } }
                state.accessTokens[accessToken] = (expiry, project)
                return lifetime
            }
            return .json(200, ["access_token": accessToken, "expires_in": lifetime, "token_type": "Bearer"])
        }

        static func invalidGrant(_ description: String) -> LocalHTTPResponse {
            .json(400, ["error": "invalid_grant", "error_description": description])
        }

        /// The fields of an `application/x-www-form-urlencoded` body.
        static func formFields(_ body: ByteBuffer) -> [String: String] {
            var fields: [String: String] = [:]
            for pair in String(decoding: body.readableBytesView, as: UTF8.self).split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                func decoded(_ text: Substring) -> String {
                    let spaced = text.replacingOccurrences(of: "+", with: " ")
                    return spaced.removingPercentEncoding ?? spaced
                }
                fields[decoded(parts[0])] = parts.count > 1 ? decoded(parts[1]) : ""
            }
            return fields
        }
    }
}
