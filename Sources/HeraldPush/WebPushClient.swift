import Foundation
import HeraldDomain
import NIOCore
import NIOHPACK
import NIOPosix
import Synchronization

/// Sends deliveries to browsers through their push services (RFC 8030): each payload encrypted
/// for its subscription (RFC 8291), `POST` to the subscription's endpoint with a VAPID token for
/// the endpoint's origin (RFC 8292) and the delivery's `TTL`, `Urgency` and `Topic`.
///
/// Every browser vendor runs its own push service, so connections are kept per origin, opened
/// on the first delivery to it; origins are few (a handful of services), but a hostile
/// registration could name any host, so at most ``maximumOrigins`` are kept and the one idle
/// longest is closed to make room.
public final class WebPushClient: PushTransport {
    public let tokens: VAPIDTokens
    let options: PushConnectionOptions
    public let maximumOrigins: Int
    private let origins = Mutex<Origins>(Origins())

    struct Origins {
        var connections: [String: PushConnections] = [:]
        /// When each open origin was last used, on a counter of uses.
        var lastUsed: [String: UInt64] = [:]
        var clock: UInt64 = 0
    }

    public init(credentials: VAPIDCredentials, options: PushConnectionOptions, maximumOrigins: Int = 64) async throws {
        tokens = try await VAPIDTokens(credentials: credentials)
        self.options = options
        self.maximumOrigins = max(1, maximumOrigins)
    }

    public var inFlight: Int { origins.withLock { $0.connections.values.reduce(0) { $0 + $1.inFlight } } }

    public func verdict(_ answer: PushAnswer) -> PushVerdict { WebPushAnswers.verdict(answer) }

    /// The origins connections are open to now (tests).
    public var openOrigins: [String] { origins.withLock { $0.connections.keys.sorted() } }

    public func submit(_ deliveries: [DeliveryRecord]) async -> [EventLoopFuture<PushAttempt>] {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        var results = [EventLoopFuture<PushAttempt>?](repeating: nil, count: deliveries.count)
        // The deliveries of a batch by origin, each origin's requests submitted together.
        var byOrigin: [String: (requests: [PushRequest], positions: [Int])] = [:]
        var order: [String] = []
        for (index, delivery) in deliveries.enumerated() {
            switch Self.prepare(delivery) {
            case .failure(let problem):
                results[index] = loop.makeSucceededFuture(.unsendable(reason: problem.reason))
            case .success(let prepared):
                if byOrigin[prepared.origin] == nil {
                    order.append(prepared.origin)
                    byOrigin[prepared.origin] = ([], [])
                }
                byOrigin[prepared.origin]?.requests.append(prepared.request)
                byOrigin[prepared.origin]?.positions.append(index)
            }
        }
        for origin in order {
            guard let group = byOrigin[origin] else { continue }
            let authorization: String
            let connections: PushConnections
            do {
                authorization = try await tokens.authorization(origin: origin)
                connections = try self.connections(to: origin)
            } catch {
                for index in group.positions { results[index] = loop.makeSucceededFuture(.lost(reason: "web push to \(origin): \(error)")) }
                continue
            }
            let requests = group.requests.map { request in
                var request = request
                request.headers.add(name: "authorization", value: authorization)
                return request
            }
            let tokens = tokens
            let sent = await Self.attempts(on: connections, requests, read: Self.answer)
            for (index, future) in zip(group.positions, sent) {
                results[index] = future.map { attempt in
                    if case .answered(let answer) = attempt, case .renewCredentials = WebPushAnswers.verdict(answer) {
                        tokens.refused(authorization, origin: origin)
                    }
                    return attempt
                }
            }
        }
        return results.map { $0 ?? loop.makeSucceededFuture(.lost(reason: "nothing was sent")) }
    }

    struct Prepared {
        var origin: String
        var request: PushRequest
    }

    struct Unsendable: Error {
        var reason: String
    }

    /// The request of one delivery, without its `Authorization`: the subscription read from the
    /// handle, the payload encrypted for it, and the delivery's `TTL`, `Urgency` and `Topic`.
    static func prepare(_ delivery: DeliveryRecord) -> Result<Prepared, Unsendable> {
        let subscription: WebPushSubscription
        switch WebPushSubscription.parse(handle: delivery.handle) {
        case .success(let parsed): subscription = parsed
        case .failure(let problem): return .failure(Unsendable(reason: "not a web push subscription: \(problem)"))
        }
        guard let origin = subscription.origin else {
            return .failure(Unsendable(reason: "the subscription's endpoint has no origin"))
        }
        if let problem = HeaderFieldRules.problem(with: delivery.headers) { return .failure(Unsendable(reason: problem)) }
        let body: [UInt8]
        do {
            body = try WebPushEncryption.encrypt(Array(delivery.payload.utf8), for: subscription)
        } catch {
            return .failure(Unsendable(reason: error.description))
        }
        var headers = HPACKHeaders()
        headers.add(name: "content-encoding", value: "aes128gcm")
        headers.add(name: "content-type", value: "application/octet-stream")
        // RFC 8030 requires TTL; the fan-out always derives one.
        headers.add(name: "ttl", value: delivery.headers["TTL"] ?? String(DeliveryHeaders.defaultWebPushTTLSeconds))
        if let urgency = delivery.headers["Urgency"] { headers.add(name: "urgency", value: urgency) }
        if let topic = delivery.headers["Topic"] { headers.add(name: "topic", value: topic) }
        return .success(
            Prepared(
                origin: origin,
                request: PushRequest(
                    path: subscription.requestPath, pathIndexing: .nonIndexable, headers: headers, body: ByteBuffer(bytes: body))))
    }

    /// The connections to `origin`, opened now when there are none; past ``maximumOrigins`` the
    /// origin used least recently is closed.
    func connections(to origin: String) throws -> PushConnections {
        let (connections, evicted) = try origins.withLock { state throws -> (PushConnections, PushConnections?) in
            state.clock += 1
            if let open = state.connections[origin] {
                state.lastUsed[origin] = state.clock
                return (open, nil)
            }
            var evicted: PushConnections?
            if state.connections.count >= maximumOrigins,
                let oldest = state.lastUsed.min(by: { $0.value < $1.value })?.key
            {
                evicted = state.connections.removeValue(forKey: oldest)
                state.lastUsed[oldest] = nil
            }
            guard let url = URL(string: origin) else { throw Unsendable(reason: "\(origin) is not a URL") }
            let opened = try PushConnections(endpoint: url, options: options)
            state.connections[origin] = opened
            state.lastUsed[origin] = state.clock
            return (opened, evicted)
        }
        if let evicted { Task { await evicted.shutdown() } }
        return connections
    }

    static func answer(_ response: PushResponse) -> PushAnswer {
        var answer = PushAnswer(statusCode: response.status, retryAfter: retryAfter(response.headers))
        if response.status < 300 {
            answer.serviceId = response.headers.first(name: "location")
        } else if response.body.readableBytes > 0 {
            // Services answer errors as JSON (`reason`, `message`, autopush's `errno`) or text.
            let text = String(decoding: response.body.readableBytesView.prefix(200), as: UTF8.self)
            if let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] {
                answer.reason = (object["reason"] as? String) ?? (object["message"] as? String) ?? (object["error"] as? String)
            } else {
                answer.reason = text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty ? nil : text
            }
        }
        return answer
    }

    public func shutdown() async {
        let open = origins.withLock { state in
            defer { state.connections = [:] }
            return Array(state.connections.values)
        }
        for connections in open { await connections.shutdown() }
    }
}
