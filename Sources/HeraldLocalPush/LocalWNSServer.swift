import Foundation
import NIOCore
import Synchronization

/// A local Windows Push Notification Services server over HTTP/2 and TLS: the OAuth 2.0 token
/// endpoint (`POST /accesstoken.srf`, client credentials of one package) and the channels
/// (`POST /?token=<channel>`). `openChannel()` makes a channel URI as Windows gives an app one,
/// on WNS's own host name (`https://db5.notify.windows.com/?token=…`, which registration accepts);
/// the sender is pointed here with `HERALD_WNS_ENDPOINT`.
///
/// Checks, answered as WNS does: a bearer token it issued (401), `X-WNS-Type` one of toast, tile,
/// badge, raw (400), the content type that goes with it (`text/xml`, or
/// `application/octet-stream` for raw; 400), an XML body for the XML types (400), at most 5,000
/// bytes (413), a channel it opened (404). Tests can script answers and read what was sent.
public final class LocalWNSServer: Sendable {
    public enum Answer: Sendable, Hashable {
        case ok
        /// 410: the channel expired.
        case gone
        /// 406: WNS throttles this channel.
        case throttled
        /// 503.
        case unavailable
    }

    public struct Request: Sendable {
        public var channel: String
        public var headers: [(name: String, value: String)]
        public var body: [UInt8]
        public var status: Int

        public func header(_ name: String) -> String? {
            headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
        }
    }

    public var port: Int { http.port }
    public var baseURL: String { "https://127.0.0.1:\(port)" }
    public var tokenURL: String { baseURL + "/accesstoken.srf" }
    public let packageSid: String
    public let clientSecret: String

    private let http: LocalHTTP2Server
    private let routes: Routes

    private init(http: LocalHTTP2Server, routes: Routes) {
        self.http = http
        self.routes = routes
        packageSid = routes.packageSid
        clientSecret = routes.clientSecret
    }

    public static func start(authority: LocalCertificateAuthority, threads: Int = 1) async throws -> LocalWNSServer {
        let routes = Routes(
            packageSid: "ms-app://s-1-15-2-\(UInt32.random(in: 1...UInt32.max))-herald-local", clientSecret: randomHex(bytes: 16))
        let http = try await LocalHTTP2Server.start(tls: try authority.makeServerTLSConfiguration(), threads: threads) { request in
            routes.answer(request)
        }
        return LocalWNSServer(http: http, routes: routes)
    }

    public func shutdown() async { await http.shutdown() }

    /// A new channel URI, as `CreatePushNotificationChannelForApplicationAsync` gives an app.
    public func openChannel() -> String {
        let token = "AwYAAAD" + randomHex(bytes: 20)
        routes.state.withLock { _ = $0.channels.insert(token) }
        return "https://db5.notify.windows.com/?token=\(token)"
    }

    /// The channel's token (the `token` query item) of a channel URI.
    public static func token(of channel: String) -> String? {
        URLComponents(string: channel)?.queryItems?.first { $0.name == "token" }?.value
    }

    public func script(channel: String, _ answers: [Answer]) {
        let token = Self.token(of: channel) ?? channel
        routes.state.withLock { $0.script.script(token: token, answers) }
    }

    /// Every access token issued so far becomes invalid: sends answer 401 until a new one is fetched.
    public func expireAccessTokens() { routes.state.withLock { $0.accessTokens.removeAll() } }

    public func requests() -> [Request] { routes.state.withLock { $0.log.records } }
    public var requestCount: Int { routes.state.withLock { $0.log.total } }
    public func answered(status: Int) -> Int { routes.state.withLock { $0.log.answered(status: status) } }
    public var tokensIssued: Int { routes.state.withLock { $0.tokensIssued } }

    private final class Routes: Sendable {
        struct State {
            var channels: Set<String> = []
            var accessTokens: Set<String> = []
            var tokensIssued = 0
            var script = AnswerScript<Answer>()
            var log = RequestLog<Request>()
        }

        let packageSid: String
        let clientSecret: String
        let state = Mutex(State())

        init(packageSid: String, clientSecret: String) {
            self.packageSid = packageSid
            self.clientSecret = clientSecret
        }

        func answer(_ request: LocalHTTPRequest) -> LocalHTTPResponse {
            guard request.method == .POST else { return Self.refuse(405, "POST only") }
            if request.path.hasPrefix("/accesstoken.srf") { return issueToken(request) }
            let channel = URLComponents(string: request.path)?.queryItems?.first { $0.name == "token" }?.value ?? ""
            let response = receive(request, channel: channel)
            state.withLock {
                $0.log.add(
                    Request(
                        channel: channel,
                        headers: request.headers.filter { !$0.name.hasPrefix(":") }.map { (name: $0.name, value: $0.value) },
                        body: Array(request.body.readableBytesView), status: response.status),
                    status: response.status)
            }
            return response
        }

        private func receive(_ request: LocalHTTPRequest, channel: String) -> LocalHTTPResponse {
            guard let authorization = request.header("authorization"), authorization.lowercased().hasPrefix("bearer "),
                state.withLock({ $0.accessTokens.contains(String(authorization.dropFirst("bearer ".count))) })
            else { return Self.refuse(401, "Token expired or invalid") }
            let type = request.header("x-wns-type") ?? ""
            guard ["wns/toast", "wns/tile", "wns/badge", "wns/raw"].contains(type) else {
                return Self.refuse(400, "X-WNS-Type must be wns/toast, wns/tile, wns/badge or wns/raw")
            }
            let contentType = request.header("content-type") ?? ""
            guard contentType == (type == "wns/raw" ? "application/octet-stream" : "text/xml") else {
                return Self.refuse(400, "Content-Type \(contentType) does not go with \(type)")
            }
            let text = String(decoding: request.body.readableBytesView, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            if type != "wns/raw", !(text.hasPrefix("<") && text.hasSuffix(">")) {
                return Self.refuse(400, "a \(type) payload is XML")
            }
            guard request.body.readableBytes <= 5_000 else { return Self.refuse(413, "the payload is larger than 5000 bytes") }
            guard state.withLock({ $0.channels.contains(channel) }) else { return Self.refuse(404, "the channel URI is not valid") }
            switch state.withLock({ $0.script.next(for: channel) }) {
            case .gone: return Self.refuse(410, "the channel expired")
            case .throttled: return Self.refuse(406, "the channel is throttled")
            case .unavailable: return Self.refuse(503, "the service is unavailable")
            case .ok, nil:
                return LocalHTTPResponse(
                    status: 200, headers: [("x-wns-status", "received"), ("x-wns-msg-id", randomHex(bytes: 8).uppercased())])
            }
        }

        private func issueToken(_ request: LocalHTTPRequest) -> LocalHTTPResponse {
            var form: [String: String] = [:]
            for pair in String(decoding: request.body.readableBytesView, as: UTF8.self).split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let value = parts.count > 1 ? String(parts[1]).replacingOccurrences(of: "+", with: " ") : ""
                form[String(parts[0])] = value.removingPercentEncoding ?? value
            }
            guard form["grant_type"] == "client_credentials", form["scope"] == "notify.windows.com" else {
                return .json(
                    400, ["error": "invalid_request", "error_description": "grant_type client_credentials, scope notify.windows.com"])
            }
            guard form["client_id"] == packageSid, form["client_secret"] == clientSecret else {
                return .json(400, ["error": "invalid_client", "error_description": "Invalid client id or secret"])
            }
            let token = "EgAcAQMAAAAALYAAY/c+" + randomHex(bytes: 24)
            state.withLock {
                $0.accessTokens.insert(token)
                $0.tokensIssued += 1
            }
            return .json(200, ["token_type": "bearer", "access_token": token, "expires_in": 86_400])
        }

        static func refuse(_ status: Int, _ description: String) -> LocalHTTPResponse {
            LocalHTTPResponse(status: status, headers: [("x-wns-error-description", description)])
        }
    }
}
