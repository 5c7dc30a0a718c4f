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
        // The same for every message of the batch.
        var headers = HPACKHeaders()
        headers.add(name: "authorization", value: "Bearer " + token)
        headers.add(name: "content-type", value: "application/json")
        let path = "/v1/projects/\(account.projectId)/messages:send"
        for (index, delivery) in deliveries.enumerated() {
            switch Self.message(delivery) {
            case .success(let body):
                requests.append(PushRequest(path: path, headers: headers, body: ByteBuffer(bytes: body)))
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
    /// tag unless the message sets them itself. Read and written with HeraldDomain's JSON reader,
    /// members in the payload's order: through Foundation's JSONSerialization this step was a
    /// third of a sender's CPU (docs/decisions/sender-connections.md).
    static func message(_ delivery: DeliveryRecord) -> Result<[UInt8], Unsendable> {
        guard case .object(let payload)? = try? JSONValue.parse(delivery.payload.utf8) else {
            return .failure(Unsendable(reason: "the payload is not a JSON object (an FCM HTTP v1 message)"))
        }
        var message = payload.objectMembers("message") ?? payload
        message.set("token", .string(delivery.handle))
        message.remove("topic")
        message.remove("condition")
        var android = message.objectMembers("android") ?? []
        let headers = delivery.headers
        if android.value("priority") == nil, let priority = headers["fcm-priority"] {
            android.set("priority", .string(priority.lowercased() == "high" ? "HIGH" : "NORMAL"))
        }
        if android.value("ttl") == nil, let ttl = headers["fcm-ttl"] { android.set("ttl", .string(ttl)) }
        if android.value("collapse_key") == nil, let key = headers["fcm-collapse-key"] { android.set("collapse_key", .string(key)) }
        // A shown notification's tag: the next one with the same tag (a correction) replaces it.
        // Only for a notification message; a data message has nothing shown to tag.
        if message.value("notification") != nil || android.value("notification") != nil, let tag = headers["fcm-tag"] {
            var notification = android.objectMembers("notification") ?? []
            if notification.value("tag") == nil {
                notification.set("tag", .string(tag))
                android.set("notification", .object(notification))
            }
        }
        if !android.isEmpty { message.set("android", .object(android)) }
        var body: [UInt8] = []
        body.reserveCapacity(delivery.payload.utf8.count + delivery.handle.utf8.count + 96)
        body.append(contentsOf: #"{"message":"#.utf8)
        JSONValue.object(message).write(into: &body)
        body.append(UInt8(ascii: "}"))
        return .success(body)
    }

    static func answer(_ response: PushResponse) -> PushAnswer {
        var answer = PushAnswer(statusCode: response.status, retryAfter: retryAfter(response.headers))
        guard response.body.readableBytes > 0, case .object(let object)? = try? JSONValue.parse(response.body.readableBytesView) else {
            return answer
        }
        if response.status == 200 {
            answer.serviceId = object.value("name")?.stringValue
        } else if let error = object.objectMembers("error") {
            let details = error.value("details")?.arrayValue ?? []
            let fcmCode = details.first { $0["@type"]?.stringValue?.hasSuffix("google.firebase.fcm.v1.FcmError") == true }?["errorCode"]
            answer.reason = fcmCode?.stringValue ?? error.value("status")?.stringValue
        }
        return answer
    }

    public func shutdown() async {
        await connections.shutdown()
        try? await tokenClient.shutdown()
    }
}

/// Editing a JSON object's members in place: a key set or removed replaces every member of
/// that name (the last one is what readers see), others keep their order.
extension [JSONMember] {
    fileprivate func value(_ key: String) -> JSONValue? { JSONValue.object(self)[key] }

    fileprivate func objectMembers(_ key: String) -> [JSONMember]? {
        if case .object(let members)? = value(key) { members } else { nil }
    }

    fileprivate mutating func set(_ key: String, _ value: JSONValue) {
        guard let position = firstIndex(where: { $0.key == key }) else {
            append(JSONMember(key: key, value: value))
            return
        }
        self[position].value = value
        self = Array(self[...position]) + self[(position + 1)...].filter { $0.key != key }
    }

    fileprivate mutating func remove(_ key: String) { removeAll { $0.key == key } }
}
