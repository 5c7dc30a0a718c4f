import Foundation
import HeraldDomain
import NIOCore
import NIOHPACK
import NIOPosix

/// Sends deliveries to APNs over HTTP/2 for one team: `POST /3/device/<token>` with the
/// provider token, the delivery's `apns-*` headers, and an `apns-id` derived from its
/// delivery id.
public final class APNsClient: PushTransport {
    public let credentials: APNsCredentials
    public let providerToken: APNsProviderToken
    let connections: PushConnections

    public init(credentials: APNsCredentials, options: PushConnectionOptions) async throws {
        self.credentials = credentials
        providerToken = await APNsProviderToken(credentials: credentials)
        connections = try PushConnections(endpoint: credentials.endpoint, options: options)
    }

    public var inFlight: Int { connections.inFlight }

    public func verdict(_ answer: PushAnswer) -> PushVerdict { APNsAnswers.verdict(answer) }

    public func submit(_ deliveries: [DeliveryRecord]) async -> [EventLoopFuture<PushAttempt>] {
        let token: String
        do {
            token = try await providerToken.token()
        } catch {
            let loop = MultiThreadedEventLoopGroup.singleton.next()
            let reason = "cannot sign the provider token of \(credentials.keySource): \(error)"
            return deliveries.map { _ in loop.makeSucceededFuture(.lost(reason: reason)) }
        }
        // A delivery whose headers cannot go on the wire is refused alone: written, it would make
        // the peer (or the HTTP/2 encoder) drop the connection and every request on it.
        var results = [EventLoopFuture<PushAttempt>?](repeating: nil, count: deliveries.count)
        var requests: [PushRequest] = []
        var positions: [Int] = []
        for (index, delivery) in deliveries.enumerated() {
            if let problem = HeaderFieldRules.problem(with: delivery.headers) {
                results[index] = MultiThreadedEventLoopGroup.singleton.next().makeSucceededFuture(.unsendable(reason: problem))
            } else {
                requests.append(request(delivery, providerToken: token))
                positions.append(index)
            }
        }
        let providerToken = providerToken
        let sent = await Self.attempts(on: connections, requests, read: Self.answer)
        for (index, future) in zip(positions, sent) {
            results[index] = future.map { attempt in
                if case .answered(let answer) = attempt, case .renewCredentials = APNsAnswers.verdict(answer) {
                    providerToken.refused(token)
                }
                return attempt
            }
        }
        return results.map { $0! }
    }

    func request(_ delivery: DeliveryRecord, providerToken: String) -> PushRequest {
        var headers = HPACKHeaders()
        headers.add(name: "authorization", value: "bearer " + providerToken)
        // Unique per request: not indexed, so the table keeps the provider token.
        headers.add(name: "apns-id", value: APNsRequestID.forDelivery(delivery.deliveryId).uuidString, indexing: .nonIndexable)
        if delivery.headers["apns-topic"] == nil {
            // A Live Activity push goes to the app's topic with the push type's suffix.
            let liveActivity = delivery.headers["apns-push-type"] == "liveactivity"
            headers.add(name: "apns-topic", value: credentials.topics[0] + (liveActivity ? Self.liveActivityTopicSuffix : ""))
        }
        for field in delivery.headers {
            let name = field.name.lowercased()
            if name.hasPrefix("apns-") && name != "apns-id" { headers.add(name: name, value: field.value) }
        }
        headers.add(name: "content-type", value: "application/json")
        return PushRequest(
            path: "/3/device/" + delivery.handle, pathIndexing: .nonIndexable, headers: headers, body: ByteBuffer(string: delivery.payload))
    }

    /// What a Live Activity push's `apns-topic` adds to the app's bundle id.
    public static let liveActivityTopicSuffix = ".push-type.liveactivity"

    static func answer(_ response: PushResponse) -> PushAnswer {
        var answer = PushAnswer(statusCode: response.status, retryAfter: retryAfter(response.headers))
        if response.status == 200 { answer.serviceId = response.headers.first(name: "apns-id") }
        if response.body.readableBytes > 0,
            let object = (try? JSONSerialization.jsonObject(with: Data(response.body.readableBytesView))) as? [String: Any]
        {
            answer.reason = object["reason"] as? String
            if let milliseconds = (object["timestamp"] as? NSNumber)?.doubleValue {
                answer.unregisteredAt = Date(timeIntervalSince1970: milliseconds / 1000)
            }
        }
        return answer
    }

    public func shutdown() async { await connections.shutdown() }
}
