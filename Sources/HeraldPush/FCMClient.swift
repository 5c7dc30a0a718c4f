import AsyncHTTPClient
import Foundation
import HeraldDomain
import NIOCore
import NIOHPACK
import NIOPosix

/// Sends deliveries with FCM HTTP v1 for one Firebase project:
/// `POST /v1/projects/<project>/messages:send` with an OAuth access token of its service
/// account and the delivery's message addressed to the device token.
public final class FCMClient: PushTransport {
    public let account: FCMServiceAccount
    public let accessTokens: AccessTokenCache
    public let endpoint: URL
    let connections: PushConnections
    /// For the token endpoint only.
    private let tokenClient: HTTPClient

    public static let production = URL(string: "https://fcm.googleapis.com")!

    /// - Parameter endpoint: FCM's base URL (a local server in tests).
    public init(account: FCMServiceAccount, endpoint: URL = FCMClient.production, options: PushConnectionOptions) async throws {
        self.account = account
        self.endpoint = endpoint
        connections = try PushConnections(endpoint: endpoint, options: options)
        tokenClient = options.makeClient()
        accessTokens = await FCMAccessTokens.cache(account: account, client: tokenClient)
    }

    public var inFlight: Int { connections.inFlight }

    public func verdict(_ answer: PushAnswer) -> PushVerdict { FCMAnswers.verdict(answer) }

    public func submit(_ deliveries: [DeliveryRecord]) async -> [EventLoopFuture<PushAttempt>] {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let token: String
        do {
            token = try await accessTokens.token()
        } catch {
            return deliveries.map { _ in loop.makeSucceededFuture(.lost(reason: "no access token: \(error)")) }
        }
        var results = [EventLoopFuture<PushAttempt>?](repeating: nil, count: deliveries.count)
        var requests: [PushRequest] = []
        var positions: [Int] = []
        for (index, delivery) in deliveries.enumerated() {
            switch Self.message(delivery) {
            case .success(let body):
                var headers = HPACKHeaders()
                headers.add(name: "authorization", value: "Bearer " + token)
                headers.add(name: "content-type", value: "application/json")
                requests.append(
                    PushRequest(path: "/v1/projects/\(account.projectId)/messages:send", headers: headers, body: ByteBuffer(bytes: body)))
                positions.append(index)
            case .failure(let problem):
                results[index] = loop.makeSucceededFuture(.unsendable(reason: problem.reason))
            }
        }
        let accessTokens = accessTokens
        let sent = await Self.attempts(on: connections, requests, read: Self.answer)
        for (index, future) in zip(positions, sent) {
            results[index] = future.map { attempt in
                if case .answered(let answer) = attempt, answer.statusCode == 401 {
                    Task { await accessTokens.refused(token) }
                }
                return attempt
            }
        }
        return results.map { $0! }
    }

    struct Unsendable: Error {
        var reason: String
    }

    /// The `messages:send` body: the delivery's payload as the HTTP v1 message (its `message`
    /// member, or the whole object when it has none), addressed to the device token, with the
    /// delivery's `fcm-*` headers as the Android priority, ttl, collapse key and notification
    /// tag unless the message sets them itself.
    static func message(_ delivery: DeliveryRecord) -> Result<[UInt8], Unsendable> {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(delivery.payload.utf8))) as? [String: Any] else {
            return .failure(Unsendable(reason: "the payload is not a JSON object (an FCM HTTP v1 message)"))
        }
        var message = (object["message"] as? [String: Any]) ?? object
        message["token"] = delivery.handle
        message.removeValue(forKey: "topic")
        message.removeValue(forKey: "condition")
        var android = (message["android"] as? [String: Any]) ?? [:]
        if android["priority"] == nil, let priority = delivery.headers["fcm-priority"] {
            android["priority"] = priority.lowercased() == "high" ? "HIGH" : "NORMAL"
        }
        if android["ttl"] == nil, let ttl = delivery.headers["fcm-ttl"] { android["ttl"] = ttl }
        if android["collapse_key"] == nil, let key = delivery.headers["fcm-collapse-key"] { android["collapse_key"] = key }
        // A shown notification's tag: the next one with the same tag (a correction) replaces it.
        // Only for a notification message; a data message has nothing shown to tag.
        if message["notification"] != nil || android["notification"] != nil, let tag = delivery.headers["fcm-tag"] {
            var notification = (android["notification"] as? [String: Any]) ?? [:]
            if notification["tag"] == nil {
                notification["tag"] = tag
                android["notification"] = notification
            }
        }
        if !android.isEmpty { message["android"] = android }
        guard let data = try? JSONSerialization.data(withJSONObject: ["message": message], options: [.sortedKeys]) else {
            return .failure(Unsendable(reason: "the message cannot be written as JSON"))
        }
        return .success(Array(data))
    }

    static func answer(_ response: PushResponse) -> PushAnswer {
        var answer = PushAnswer(statusCode: response.status, retryAfter: retryAfter(response.headers))
        guard response.body.readableBytes > 0,
            let object = (try? JSONSerialization.jsonObject(with: Data(response.body.readableBytesView))) as? [String: Any]
        else {
            return answer
        }
        if response.status == 200 {
            answer.serviceId = object["name"] as? String
        } else if let error = object["error"] as? [String: Any] {
            let details = (error["details"] as? [[String: Any]]) ?? []
            let fcmCode = details.first { ($0["@type"] as? String)?.hasSuffix("google.firebase.fcm.v1.FcmError") == true }?["errorCode"]
            answer.reason = (fcmCode as? String) ?? (error["status"] as? String)
        }
        return answer
    }

    public func shutdown() async {
        await connections.shutdown()
        try? await tokenClient.shutdown()
    }
}
