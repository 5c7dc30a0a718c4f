import AsyncHTTPClient
import Foundation
import HeraldDomain
import NIOCore
import NIOHTTP1

/// Sends deliveries to APNs over HTTP/2 for one team: `POST /3/device/<token>` with the
/// provider token, the delivery's `apns-*` headers, and an `apns-id` derived from its
/// delivery id.
public final class APNsClient: PushTransport {
    public let credentials: APNsCredentials
    public let providerToken: APNsProviderToken
    let connections: PushConnections
    let timeout: TimeInterval

    public init(credentials: APNsCredentials, options: PushConnectionOptions) async {
        self.credentials = credentials
        providerToken = await APNsProviderToken(credentials: credentials)
        connections = PushConnections(options: options)
        timeout = options.requestTimeout
    }

    public var inFlight: Int { connections.inFlight }

    public func verdict(_ answer: PushAnswer) -> PushVerdict { APNsAnswers.verdict(answer) }

    public func send(_ delivery: DeliveryRecord) async -> PushAttempt {
        let token: String
        do {
            token = try await providerToken.token()
        } catch {
            return .lost(reason: "cannot sign the provider token of \(credentials.keySource): \(error)")
        }
        let request = self.request(delivery, providerToken: token)
        let attempt = await Self.attempt(on: connections, timeout: timeout, request) { status, headers, body in
            Self.answer(status: status, headers: headers, body: body)
        }
        if case .answered(let answer) = attempt, case .renewCredentials = verdict(answer) {
            providerToken.refused(token)
        }
        return attempt
    }

    func request(_ delivery: DeliveryRecord, providerToken: String) -> HTTPClientRequest {
        var request = HTTPClientRequest(url: credentials.endpoint.absoluteString + "/3/device/" + delivery.handle)
        request.method = .POST
        request.headers.add(name: "authorization", value: "bearer " + providerToken)
        request.headers.add(name: "apns-id", value: APNsRequestID.forDelivery(delivery.deliveryId).uuidString)
        if delivery.headers["apns-topic"] == nil {
            request.headers.add(name: "apns-topic", value: credentials.topics[0])
        }
        for field in delivery.headers where field.name.lowercased().hasPrefix("apns-") && field.name.lowercased() != "apns-id" {
            request.headers.add(name: field.name.lowercased(), value: field.value)
        }
        request.headers.add(name: "content-type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: delivery.payload.utf8))
        return request
    }

    static func answer(status: HTTPResponseStatus, headers: HTTPHeaders, body: ByteBuffer) -> PushAnswer {
        var answer = PushAnswer(statusCode: Int(status.code), retryAfter: retryAfter(headers), serviceId: headers.first(name: "apns-id"))
        if body.readableBytes > 0, let object = (try? JSONSerialization.jsonObject(with: Data(body.readableBytesView))) as? [String: Any] {
            answer.reason = object["reason"] as? String
            if let milliseconds = (object["timestamp"] as? NSNumber)?.doubleValue {
                answer.unregisteredAt = Date(timeIntervalSince1970: milliseconds / 1000)
            }
        }
        if status != .ok { answer.serviceId = nil }
        return answer
    }

    public func shutdown() async { await connections.shutdown() }
}
