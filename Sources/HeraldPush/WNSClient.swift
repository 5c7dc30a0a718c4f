import AsyncHTTPClient
import Foundation
import HeraldDomain
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A Windows app's WNS identity: the package security identifier and secret from the Partner
/// Center, exchanged for access tokens (OAuth 2.0 client credentials, scope `notify.windows.com`).
public struct WNSCredentials: Sendable {
    public let packageSid: String
    public let clientSecret: String
    /// The token endpoint: `https://login.live.com/accesstoken.srf`, or a local server's.
    public let tokenURL: URL
    /// When set, every channel URI is sent to this origin instead of its own (a local WNS server
    /// in tests and `make run`); nil sends to the channel URI itself.
    public let endpoint: URL?

    public static let production = URL(string: "https://login.live.com/accesstoken.srf")!

    public init(packageSid: String, clientSecret: String, tokenURL: URL = WNSCredentials.production, endpoint: URL? = nil) {
        self.packageSid = packageSid
        self.clientSecret = clientSecret
        self.tokenURL = tokenURL
        self.endpoint = endpoint
    }
}

/// The token endpoint refused the package's credentials.
public struct WNSTokenError: Error, CustomStringConvertible {
    public var tokenURL: String
    public var reason: String
    public var description: String { "the WNS token endpoint \(tokenURL) refused the package credentials: \(reason)" }
}

/// Sends deliveries to Windows devices through WNS: `POST <channel URI>` with the access token,
/// `X-WNS-Type` (toast, tile, badge or raw), the content type that goes with it, and the
/// delivery's `X-WNS-TTL` and `X-WNS-Tag`. A toast, tile or badge payload that is not
/// well-formed XML is refused before sending.
///
/// Channel URIs live on many hosts (`*.notify.windows.com`), so requests go through
/// async-http-client's pool, which keeps connections per host and speaks HTTP/2 where the host
/// offers it and HTTP/1.1 otherwise.
public final class WNSClient: PushTransport {
    public let credentials: WNSCredentials
    public let accessTokens: AccessTokenCache
    let client: HTTPClient
    let timeout: TimeInterval
    private let outstanding = Atomic<Int>(0)

    public static let types: Set<String> = ["wns/toast", "wns/tile", "wns/badge", "wns/raw"]

    public init(credentials: WNSCredentials, options: PushConnectionOptions) {
        self.credentials = credentials
        timeout = options.requestTimeout
        let client = options.makeClient(connectionsPerHost: options.connections * options.streamsPerConnection)
        self.client = client
        accessTokens = AccessTokenCache { now in try await Self.exchange(credentials, client: client, now: now) }
    }

    public var inFlight: Int { outstanding.load(ordering: .relaxed) }

    public func verdict(_ answer: PushAnswer) -> PushVerdict { WNSAnswers.verdict(answer) }

    public func submit(_ deliveries: [DeliveryRecord]) async -> [EventLoopFuture<PushAttempt>] {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let token: String
        do {
            token = try await accessTokens.token()
        } catch {
            return deliveries.map { _ in loop.makeSucceededFuture(.lost(reason: "no WNS access token: \(error)")) }
        }
        let accessTokens = accessTokens
        return deliveries.map { delivery in
            let request: HTTPClient.Request
            switch self.request(delivery, token: token) {
            case .failure(let problem): return loop.makeSucceededFuture(.unsendable(reason: problem.reason))
            case .success(let made): request = made
            }
            outstanding.add(1, ordering: .relaxed)
            let sent = client.execute(request: request, deadline: .now() + .milliseconds(Int64(timeout * 1000)))
            return sent.map { response -> PushAttempt in
                let answer = Self.answer(response)
                if answer.statusCode == 401 { Task { await accessTokens.refused(token) } }
                return .answered(answer)
            }.recover { error in
                .lost(reason: "connection: \(error)")
            }.always { _ in self.outstanding.subtract(1, ordering: .relaxed) }
        }
    }

    struct Unsendable: Error {
        var reason: String
    }

    func request(_ delivery: DeliveryRecord, token: String) -> Result<HTTPClient.Request, Unsendable> {
        guard let channel = URLComponents(string: delivery.handle), channel.scheme == "https", channel.host != nil else {
            return .failure(Unsendable(reason: "the channel URI is not an https URL"))
        }
        var target = channel
        if let endpoint = credentials.endpoint, let origin = URLComponents(url: endpoint, resolvingAgainstBaseURL: false) {
            target.scheme = origin.scheme
            target.host = origin.host
            target.port = origin.port
        }
        if let problem = HeaderFieldRules.problem(with: delivery.headers) { return .failure(Unsendable(reason: problem)) }
        let type = delivery.headers["X-WNS-Type"] ?? "wns/raw"
        guard Self.types.contains(type) else {
            return .failure(Unsendable(reason: "X-WNS-Type \"\(type)\" is not one of \(Self.types.sorted().joined(separator: ", "))"))
        }
        if type != "wns/raw", let problem = NotificationEvent.xmlProblem(delivery.payload) {
            return .failure(Unsendable(reason: "a \(type) payload must be well-formed XML: \(problem)"))
        }
        var headers = HTTPHeaders()
        headers.add(name: "authorization", value: "Bearer " + token)
        headers.add(name: "x-wns-type", value: type)
        headers.add(name: "content-type", value: type == "wns/raw" ? "application/octet-stream" : "text/xml")
        for name in ["X-WNS-TTL", "X-WNS-Tag", "X-WNS-Group", "X-WNS-Cache-Policy", "X-WNS-RequestForStatus"] {
            if let value = delivery.headers[name] { headers.add(name: name.lowercased(), value: value) }
        }
        guard let url = target.url,
            let request = try? HTTPClient.Request(url: url, method: .POST, headers: headers, body: .string(delivery.payload))
        else {
            return .failure(Unsendable(reason: "the channel URI cannot be requested"))
        }
        return .success(request)
    }

    static func answer(_ response: HTTPClient.Response) -> PushAnswer {
        var answer = PushAnswer(statusCode: Int(response.status.code), retryAfter: retryAfter(response.headers))
        if response.status == .ok {
            answer.serviceId = response.headers.first(name: "x-wns-msg-id")
        } else {
            // WNS explains in X-WNS-Error-Description; the body is usually empty.
            answer.reason =
                response.headers.first(name: "x-wns-error-description")
                ?? response.headers.first(name: "x-wns-notificationstatus").map { "X-WNS-NotificationStatus: \($0)" }
        }
        return answer
    }

    static func retryAfter(_ headers: HTTPHeaders) -> TimeInterval? {
        headers.first(name: "retry-after").flatMap { TimeInterval($0.trimmingCharacters(in: .whitespaces)) }.map { max(0, $0) }
    }

    static func exchange(_ credentials: WNSCredentials, client: HTTPClient, now: Date) async throws -> (token: String, expiresAt: Date) {
        let form =
            "grant_type=client_credentials&client_id=\(OAuthForm.encode(credentials.packageSid))&client_secret=\(OAuthForm.encode(credentials.clientSecret))&scope=notify.windows.com"
        let (status, object) = try await OAuthForm.post(form, to: credentials.tokenURL.absoluteString, client: client)
        guard status == 200, let token = object?["access_token"] as? String else {
            throw WNSTokenError(tokenURL: credentials.tokenURL.absoluteString, reason: OAuthForm.reason(status, object))
        }
        let lifetime = (object?["expires_in"] as? NSNumber)?.doubleValue ?? 86_400
        return (token, now.addingTimeInterval(lifetime))
    }

    public func shutdown() async { try? await client.shutdown() }
}
