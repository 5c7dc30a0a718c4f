import Foundation
import HeraldDomain
import HeraldLocalPush
import NIOCore
import Testing

@testable import HeraldPush

/// The WNS client against the local WNS server: client-credentials tokens, the type and content
/// type of each notification, and WNS's answers.
@Suite("WNS client against the local WNS server", .heavy)
struct WNSClientTests {
    static func client(_ push: LocalPushServices) -> WNSClient {
        WNSClient(
            credentials: WNSCredentials(
                packageSid: push.wns.packageSid, clientSecret: push.wns.clientSecret, tokenURL: URL(string: push.wns.tokenURL)!,
                endpoint: URL(string: push.wns.baseURL)!),
            options: PushConnectionOptions(connections: 1, requestTimeout: 120, extraTrustFile: push.caFile))
    }

    static let toast = #"<toast><visual><binding template="ToastGeneric"><text>Summit ends</text></binding></visual></toast>"#

    static func delivery(_ n: Int, channel: String, payload: String = toast, headers: DeliveryHeaders = ["X-WNS-Type": "wns/toast"])
        -> DeliveryRecord
    {
        DeliveryRecord(
            eventId: "bn-1", registrationId: "win\(n)", platform: .wns, handle: channel, template: "news", payload: payload,
            headers: headers, expiresAt: nil, publishedAt: nil, renderedAt: Date())
    }

    static func settled(_ futures: [EventLoopFuture<PushAttempt>]) async throws -> [PushAttempt] {
        var attempts: [PushAttempt] = []
        for future in futures { attempts.append(try await future.get()) }
        return attempts
    }

    @Test("100 toasts, tiles, badges and raw notifications: 200 each with one access token, the content type to match each type")
    func sends() async throws {
        let push = try await LocalPushServices.start()
        let client = Self.client(push)
        let channels = (0..<10).map { _ in push.wns.openChannel() }
        let kinds: [(String, String)] = [
            ("wns/toast", Self.toast),
            ("wns/tile", #"<tile><visual><binding template="TileMedium"><text>Hi</text></binding></visual></tile>"#),
            ("wns/badge", #"<badge value="3"/>"#), ("wns/raw", #"{"story":"summit"}"#),
        ]
        let deliveries = (0..<100).map { n in
            Self.delivery(
                n, channel: channels[n % 10], payload: kinds[n % 4].1,
                headers: ["X-WNS-Type": kinds[n % 4].0, "X-WNS-TTL": "600", "X-WNS-Tag": "summit"])
        }
        for attempt in try await Self.settled(await client.submit(deliveries)) {
            guard case .answered(let answer) = attempt else {
                Issue.record("\(attempt)")
                continue
            }
            #expect(client.verdict(answer) == .sent && answer.serviceId != nil, "\(answer)")
        }
        #expect(await client.accessTokens.exchanges == 1)
        #expect(push.wns.tokensIssued == 1)
        let requests = push.wns.requests()
        #expect(requests.count == 100)
        for request in requests {
            let type = try #require(request.header("x-wns-type"))
            #expect(request.header("content-type") == (type == "wns/raw" ? "application/octet-stream" : "text/xml"))
            #expect(request.header("x-wns-ttl") == "600" && request.header("x-wns-tag") == "summit")
        }
        #expect(client.inFlight == 0)
        await client.shutdown()
        await push.shutdown()
    }

    @Test("answers: 410 and 404 unregistered, 406 retried, an expired access token renewed and the request retried")
    func answers() async throws {
        let push = try await LocalPushServices.start()
        let client = Self.client(push)
        let expired = push.wns.openChannel()
        push.wns.script(channel: expired, [.gone])
        let throttled = push.wns.openChannel()
        push.wns.script(channel: throttled, [.throttled])
        let unknown = "https://db5.notify.windows.com/?token=AwYAAADnever"
        var verdicts: [PushVerdict] = []
        for channel in [expired, unknown, throttled] {
            guard case .answered(let answer) = await client.send(Self.delivery(0, channel: channel)) else {
                Issue.record("no answer")
                continue
            }
            verdicts.append(client.verdict(answer))
        }
        #expect(verdicts.count == 3)
        #expect(verdicts[0] == .unregistered(since: nil))
        #expect(verdicts[1] == .unregistered(since: nil))
        #expect(verdicts[2] == .retry(reason: "the channel is throttled", after: nil))

        push.wns.expireAccessTokens()
        let channel = push.wns.openChannel()
        guard case .answered(let refused) = await client.send(Self.delivery(1, channel: channel)) else {
            Issue.record("no answer")
            return
        }
        #expect(client.verdict(refused) == .renewCredentials(reason: "Token expired or invalid"))
        // The refusal drops the token (asynchronously); the next request exchanges again.
        var answer = refused
        for _ in 0..<50 where answer.statusCode == 401 {
            if case .answered(let next) = await client.send(Self.delivery(2, channel: channel)) { answer = next }
        }
        #expect(answer.statusCode == 200)
        #expect(push.wns.tokensIssued == 2)
        await client.shutdown()
        await push.shutdown()
    }

    @Test("a toast that is not XML, an unknown type or a header off the wire is refused without a request")
    func unsendable() async throws {
        let push = try await LocalPushServices.start()
        let client = Self.client(push)
        let channel = push.wns.openChannel()
        let deliveries = [
            Self.delivery(0, channel: channel, payload: "<toast><visual>"),
            Self.delivery(1, channel: channel, headers: ["X-WNS-Type": "wns/popup"]),
            Self.delivery(2, channel: channel, headers: ["X-WNS-Type": "wns/toast", "X-WNS-Tag": "a\nb"]),
        ]
        let attempts = try await Self.settled(await client.submit(deliveries))
        for (n, attempt) in attempts.enumerated() {
            guard case .unsendable(let reason) = attempt else {
                Issue.record("delivery \(n) was sent: \(attempt)")
                continue
            }
            #expect(reason.contains(["well-formed XML", "wns/popup", "control characters"][n]), "\(reason)")
        }
        #expect(push.wns.requestCount == 0)
        await client.shutdown()
        await push.shutdown()
    }
}
