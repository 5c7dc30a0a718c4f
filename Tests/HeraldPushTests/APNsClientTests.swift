import Foundation
import HeraldDomain
import HeraldLocalPush
import HeraldTestSupport
import Testing

@testable import HeraldPush

/// The APNs client on its own HTTP/2 connections, against the local APNs server.
@Suite("APNs client against the local APNs server", .heavy)
struct APNsClientTests {
    static func delivery(_ n: Int) -> DeliveryRecord {
        DeliveryRecord(
            eventId: "bn-1", registrationId: "r\(n)", platform: .apns,
            handle: String(repeating: String(format: "%02x", n % 256), count: 32),
            template: "news", payload: #"{"aps":{"alert":"Hi"}}"#, headers: ["apns-push-type": "alert"], expiresAt: nil,
            publishedAt: nil, renderedAt: Date())
    }

    static func client(_ push: LocalPushServices, connections: Int = 1, streams: Int = 100, timeout: TimeInterval = 120) async throws
        -> APNsClient
    {
        let credentials = try APNsCredentials.load(
            keyFile: push.keyFile, keyId: push.apnsKey.keyId, teamId: push.apnsKey.teamId, topics: [push.topic],
            endpoint: push.apns.baseURL)
        return try await APNsClient(
            credentials: credentials,
            options: PushConnectionOptions(
                connections: connections, streamsPerConnection: streams, requestTimeout: timeout, extraTrustFile: push.caFile))
    }

    @Test("500 concurrent deliveries over 2 connections: all accepted, each with its derived apns-id, never more in flight than allowed")
    func concurrent() async throws {
        let push = try await LocalPushServices.start()
        let client = try await Self.client(push, connections: 2, streams: 50)
        let attempts = await withTaskGroup(of: (Int, PushAttempt).self) { group in
            for n in 0..<500 { group.addTask { (n, await client.send(Self.delivery(n))) } }
            var all: [Int: PushAttempt] = [:]
            for await (n, attempt) in group { all[n] = attempt }
            return all
        }
        for (n, attempt) in attempts {
            #expect(
                attempt
                    == .answered(PushAnswer(statusCode: 200, serviceId: APNsRequestID.forDelivery(Self.delivery(n).deliveryId).uuidString)))
        }
        #expect(push.apns.connectionsAccepted == 2)
        #expect(client.inFlight == 0)
        await client.shutdown()
        await push.shutdown()
    }

    @Test("a Live Activity push goes to the app's topic with the liveactivity suffix; the server checks its payload")
    func liveActivity() async throws {
        let push = try await LocalPushServices.start()
        let client = try await Self.client(push)
        var update = Self.delivery(1)
        update.headers = ["apns-push-type": "liveactivity", "apns-priority": "10"]
        update.payload = #"{"aps":{"timestamp":1795900000,"event":"update","content-state":{"home":1}}}"#
        var broken = update
        broken.registrationId = "r2"
        broken.payload = #"{"aps":{"alert":"not an activity"}}"#
        let attempts = [await client.send(update), await client.send(broken)]
        #expect(attempts[0] == .answered(PushAnswer(statusCode: 200, serviceId: APNsRequestID.forDelivery(update.deliveryId).uuidString)))
        guard case .answered(let refused) = attempts[1] else {
            Issue.record("\(attempts[1])")
            return
        }
        #expect(refused.statusCode == 400 && refused.reason == "BadLiveActivityPayload")
        let topics = push.apns.requests().compactMap { $0.header("apns-topic") }
        #expect(topics == [push.topic + ".push-type.liveactivity", push.topic + ".push-type.liveactivity"])
        await client.shutdown()
        await push.shutdown()
    }

    @Test("deliveries whose headers cannot go on the wire are refused alone; the others and their connection are unharmed")
    func unsendableHeaders() async throws {
        let push = try await LocalPushServices.start()
        let client = try await Self.client(push)
        var deliveries = (0..<20).map(Self.delivery)
        deliveries[3].headers = ["apns-push-type": "alert", "apns-collapse-id": "a\r\nx-evil: 1"]
        deliveries[7].headers = DeliveryHeaders(
            (0..<32).map { DeliveryHeaders.Field(name: "apns-x-\($0)", value: String(repeating: "v", count: 4_096)) })
        deliveries[11].headers = ["apns-push-type": "background\u{0}"]
        let attempts = await client.submit(deliveries)
        for (n, future) in attempts.enumerated() {
            let attempt = try await future.get()
            if [3, 7, 11].contains(n) {
                guard case .unsendable(let reason) = attempt else {
                    Issue.record("delivery \(n) was sent: \(attempt)")
                    continue
                }
                #expect(reason.contains(n == 7 ? "the limit is 8192" : "control characters"), "\(reason)")
            } else {
                #expect(
                    attempt
                        == .answered(PushAnswer(statusCode: 200, serviceId: APNsRequestID.forDelivery(deliveries[n].deliveryId).uuidString))
                )
            }
        }
        #expect(push.apns.requestCount == 17)
        #expect(push.apns.connectionsAccepted == 1)
        await client.shutdown()
        await push.shutdown()
    }

    @Test("a dropped connection loses the requests on it; the next request opens a new one; a slow answer times out")
    func lostAndTimedOut() async throws {
        let push = try await LocalPushServices.start()
        let client = try await Self.client(push)
        let first = await client.send(Self.delivery(1))
        #expect(
            first == .answered(PushAnswer(statusCode: 200, serviceId: APNsRequestID.forDelivery(Self.delivery(1).deliveryId).uuidString)),
            "\(first)")
        // The server holds the answer until the connection is dropped under it: the drop comes
        // once the server has the request, however long that takes.
        push.apns.setDelay(.seconds(3_600))
        async let inFlight = client.send(Self.delivery(2))
        try await waitUntilTrue("the server receiving the second request") { push.apns.requestCount == 2 }
        await push.apns.dropConnections()
        guard case .lost(let reason) = await inFlight else {
            Issue.record("a request on a dropped connection was answered")
            return
        }
        #expect(reason.hasPrefix("connection"))
        push.apns.setDelay(.zero)
        guard case .answered(let answer) = await client.send(Self.delivery(3)) else {
            Issue.record("no answer on a new connection")
            return
        }
        #expect(answer.statusCode == 200)
        #expect(push.apns.connectionsAccepted == 2)
        // Another client that waits 1 s at most, on a server that never answers in time.
        let impatient = try await Self.client(push, timeout: 1)
        push.apns.setDelay(.seconds(3_600))
        #expect(await impatient.send(Self.delivery(4)) == .lost(reason: "timeout"))
        await impatient.shutdown()
        await client.shutdown()
        await push.shutdown()
    }
}
