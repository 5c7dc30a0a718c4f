import Crypto
import Foundation
import HeraldDomain
import HeraldLocalPush
import NIOCore
import Testing

@testable import HeraldPush

/// The Web Push client against the local Web Push service, which checks each VAPID token and
/// decrypts each message with the browser's private key.
@Suite("Web Push client against the local Web Push service", .heavy)
struct WebPushClientTests {
    static func client(_ push: LocalPushServices, maximumOrigins: Int = 64) async throws -> WebPushClient {
        let credentials = try VAPIDCredentials.make(
            privateKey: push.vapidPrivateKey, subject: LocalPushServices.vapidSubject, source: "test")
        return try await WebPushClient(
            credentials: credentials, options: PushConnectionOptions(connections: 1, requestTimeout: 120, extraTrustFile: push.caFile),
            maximumOrigins: maximumOrigins)
    }

    static func delivery(_ n: Int, handle: String, payload: String? = nil, headers: DeliveryHeaders? = nil) -> DeliveryRecord {
        DeliveryRecord(
            eventId: "bn-1", registrationId: "w\(n)", platform: .webpush, handle: handle, template: "news",
            payload: payload ?? #"{"title":"Summit ends","n":\#(n)}"#,
            headers: headers ?? ["Urgency": "high", "TTL": "3600", "Topic": "summit"], expiresAt: nil, publishedAt: nil,
            renderedAt: Date())
    }

    static func settled(_ futures: [EventLoopFuture<PushAttempt>]) async throws -> [PushAttempt] {
        var attempts: [PushAttempt] = []
        for future in futures { attempts.append(try await future.get()) }
        return attempts
    }

    @Test("200 deliveries to 50 browsers: each answered 201 and decrypted by its browser to the payload sent, with one VAPID token")
    func sendsEncrypted() async throws {
        let push = try await LocalPushServices.start()
        let client = try await Self.client(push)
        let browsers = (0..<50).map { _ in push.webPush.subscribe() }
        let deliveries = (0..<200).map { Self.delivery($0, handle: browsers[$0 % 50].handle) }
        let attempts = try await Self.settled(await client.submit(deliveries))
        for attempt in attempts {
            guard case .answered(let answer) = attempt, client.verdict(answer) == .sent else {
                Issue.record("\(attempt)")
                continue
            }
            #expect(answer.serviceId?.hasPrefix(push.webPush.origin + "/message/") == true)
        }
        let received = push.webPush.requests()
        #expect(received.count == 200)
        for request in received {
            let n = try #require(
                Int(
                    request.plaintext.flatMap { text in
                        (try? JSONSerialization.jsonObject(with: Data(text))) as? [String: Any]
                    }?["n"].map { "\($0)" } ?? ""))
            #expect(browsers[n % 50].id == request.subscriptionId)
            #expect(request.header("urgency") == "high")
            #expect(request.header("ttl") == "3600")
            #expect(request.header("topic") == "summit")
            #expect(request.header("content-encoding") == "aes128gcm")
        }
        #expect(push.webPush.distinctTokens == 1)
        #expect(push.webPush.connectionsAccepted == 1)
        #expect(client.openOrigins == [push.webPush.origin])
        await client.shutdown()
        await push.shutdown()
    }

    @Test("answers: an unsubscribed browser is unregistered, 413 rejected, 429 retried after its Retry-After, 503 retried")
    func answers() async throws {
        let push = try await LocalPushServices.start()
        let client = try await Self.client(push)
        let gone = push.webPush.subscribe()
        push.webPush.unsubscribe(gone.id)
        let scripted = push.webPush.subscribe()
        push.webPush.script(subscription: scripted.id, [.notFound, .tooLarge, .tooManyRequests(retryAfter: 7), .unavailable])
        var verdicts: [PushVerdict] = []
        for delivery in [Self.delivery(0, handle: gone.handle)] + (1...4).map({ Self.delivery($0, handle: scripted.handle) }) {
            guard case .answered(let answer) = await client.send(delivery) else {
                Issue.record("no answer")
                continue
            }
            verdicts.append(client.verdict(answer))
        }
        #expect(verdicts.count == 5)
        #expect(verdicts[0] == .unregistered(since: nil))
        #expect(verdicts[1] == .unregistered(since: nil))
        #expect(verdicts[2] == .rejected(reason: "the payload is too large"))
        #expect(verdicts[3] == .retry(reason: "too many requests", after: 7))
        #expect(verdicts[4] == .retry(reason: "the service is unavailable", after: nil))
        await client.shutdown()
        await push.shutdown()
    }

    @Test("what cannot be sent is refused alone before any request: no keys, a payload too large, headers off the wire")
    func unsendable() async throws {
        let push = try await LocalPushServices.start()
        let client = try await Self.client(push)
        let browser = push.webPush.subscribe()
        let deliveries = [
            Self.delivery(0, handle: browser.endpoint),
            Self.delivery(1, handle: browser.handle, payload: String(repeating: "x", count: 3994)),
            Self.delivery(2, handle: browser.handle, headers: ["TTL": "60", "Topic": "a\r\nb"]),
            Self.delivery(3, handle: browser.handle),
        ]
        let attempts = try await Self.settled(await client.submit(deliveries))
        for (n, attempt) in attempts.prefix(3).enumerated() {
            guard case .unsendable(let reason) = attempt else {
                Issue.record("delivery \(n) was sent: \(attempt)")
                continue
            }
            #expect(reason.contains(["subscription's keys", "at most 3993", "control characters"][n]), "\(reason)")
        }
        guard case .answered(let answer) = attempts[3] else {
            Issue.record("the sendable delivery got \(attempts[3])")
            return
        }
        #expect(answer.statusCode == 201)
        #expect(push.webPush.requestCount == 1)
        #expect(push.webPush.answered(status: 201) == 1)
        await client.shutdown()
        await push.shutdown()
    }

    @Test("a VAPID key the browsers were not subscribed with is refused (403): the token is renewed and the verdict asks for it")
    func wrongKey() async throws {
        let push = try await LocalPushServices.start()
        let other = try VAPIDCredentials.make(
            privateKey: Base64URL.encode(P256.Signing.PrivateKey().rawRepresentation), subject: "https://example.com/contact",
            source: "test")
        let client = try await WebPushClient(
            credentials: other, options: PushConnectionOptions(connections: 1, requestTimeout: 120, extraTrustFile: push.caFile))
        let browser = push.webPush.subscribe()
        guard case .answered(let answer) = await client.send(Self.delivery(0, handle: browser.handle)) else {
            Issue.record("no answer")
            return
        }
        #expect(answer.statusCode == 403)
        #expect(client.verdict(answer) == .renewCredentials(reason: "k is not the application server key the subscription was made with"))
        _ = await client.send(Self.delivery(1, handle: browser.handle))
        #expect(client.tokens.tokensMade == 2)
        await client.shutdown()
        await push.shutdown()
    }

    @Test("connections are kept for at most maximumOrigins origins; the one used least recently is closed")
    func boundedOrigins() async throws {
        let push = try await LocalPushServices.start()
        let client = try await Self.client(push, maximumOrigins: 2)
        let browser = push.webPush.subscribe()
        // Three origins (whether they answer does not matter here: connections are kept per origin).
        let port = push.webPush.port
        let hosts = ["127.0.0.1", "localhost", "127.0.0.1."]
        for host in hosts {
            let handle = browser.handle.replacingOccurrences(of: "https://127.0.0.1:\(port)", with: "https://\(host):\(port)")
            _ = await client.send(Self.delivery(0, handle: handle))
        }
        #expect(client.openOrigins.count == 2)
        #expect(!client.openOrigins.contains("https://127.0.0.1:\(port)"))
        await client.shutdown()
        await push.shutdown()
    }
}
