import Crypto
import Foundation
import HeraldDomain
import NIOCore
import NIOHPACK
import Testing
import _CryptoExtras

@testable import HeraldPush

@Suite("push requests and answers")
struct PushRequestTests {
    static let pem = P256.Signing.PrivateKey().pemRepresentation

    static func credentials(topics: [String] = ["com.example.news"]) throws -> APNsCredentials {
        try APNsCredentials.make(
            pem: pem, keySource: "AuthKey.p8", keyId: "ABC123DEFG", teamId: "TEAM123456", topics: topics,
            endpoint: "https://127.0.0.1:8443")
    }

    static func delivery(platform: Platform = .apns, payload: String = #"{"aps":{"alert":"Hi"}}"#, headers: DeliveryHeaders = [:])
        -> DeliveryRecord
    {
        DeliveryRecord(
            eventId: "bn-1", registrationId: "r-1", platform: platform, handle: String(repeating: "ab", count: 32),
            template: "newsTemplate", payload: payload, headers: headers, expiresAt: nil, publishedAt: nil, renderedAt: Date())
    }

    @Test("an APNs request carries the provider token, a derived apns-id, the default topic and the delivery's apns headers only")
    func apnsRequest() async throws {
        let client = try await APNsClient(credentials: try Self.credentials(), options: PushConnectionOptions(connections: 1))
        defer { Task { await client.shutdown() } }
        let delivery = Self.delivery(headers: ["apns-push-type": "alert", "apns-priority": "10", "fcm-ttl": "60s", "apns-id": "x"])
        let request = client.request(delivery, providerToken: "jwt")
        #expect(request.path == "/3/device/" + delivery.handle)
        #expect(String(buffer: request.body) == delivery.payload)
        #expect(request.headers["authorization"] == ["bearer jwt"])
        #expect(request.headers["apns-id"] == [APNsRequestID.forDelivery(delivery.deliveryId).uuidString])
        #expect(request.headers["apns-topic"] == ["com.example.news"])
        #expect(request.headers["apns-push-type"] == ["alert"])
        #expect(request.headers["apns-priority"] == ["10"])
        #expect(request.headers["fcm-ttl"].isEmpty)
        // What each request repeats stays in the HPACK table; what names one device does not.
        #expect(request.pathIndexing == .nonIndexable)
        #expect(request.headers.first { $0.name == "apns-id" }?.indexable == .nonIndexable)
        #expect(request.headers.first { $0.name == "authorization" }?.indexable == .indexable)
        await client.shutdown()
    }

    @Test("APNs answers: a 410 carries the token's last invalid moment, a 200 the apns-id, Retry-After is read")
    func apnsAnswers() {
        let gone = APNsClient.answer(
            PushResponse(status: 410, body: ByteBuffer(string: #"{"reason":"Unregistered","timestamp":1700000000000}"#)))
        #expect(gone.statusCode == 410)
        #expect(gone.reason == "Unregistered")
        #expect(gone.unregisteredAt == Date(timeIntervalSince1970: 1_700_000_000))
        let ok = APNsClient.answer(PushResponse(status: 200, headers: ["apns-id": "ID-1"]))
        #expect(ok.serviceId == "ID-1")
        let busy = APNsClient.answer(
            PushResponse(status: 429, headers: ["retry-after": "7"], body: ByteBuffer(string: #"{"reason":"TooManyRequests"}"#)))
        #expect(busy.retryAfter == 7)
        #expect(APNsAnswers.verdict(busy) == .retry(reason: "TooManyRequests", after: 7))
    }

    @Test("an FCM message: the payload's message addressed to the token, with the fcm headers as Android settings")
    func fcmMessage() throws {
        let delivery = Self.delivery(
            platform: .fcm, payload: #"{"message":{"notification":{"title":"T"},"topic":"all","android":{"ttl":"5s"}}}"#,
            headers: ["fcm-priority": "high", "fcm-ttl": "60s", "fcm-collapse-key": "summit"])
        let bytes = try FCMClient.message(delivery).get()
        let object = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        let message = try #require(object["message"] as? [String: Any])
        #expect(message["token"] as? String == delivery.handle)
        #expect(message["topic"] == nil)
        let android = try #require(message["android"] as? [String: Any])
        #expect(android["priority"] as? String == "HIGH")
        #expect(android["ttl"] as? String == "5s")  // the message's own setting wins
        #expect(android["collapse_key"] as? String == "summit")
        #expect(android["notification"] == nil)  // no fcm-tag: no tag
        // A shown notification gets the replace key as its tag (a correction replaces it); a data
        // message has nothing shown, so nothing to tag; the message's own tag wins.
        func androidOf(_ payload: String) throws -> [String: Any]? {
            let bytes = try FCMClient.message(Self.delivery(platform: .fcm, payload: payload, headers: ["fcm-tag": "bn-1"])).get()
            let object = try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
            return (object?["message"] as? [String: Any])?["android"] as? [String: Any]
        }
        #expect(
            (try androidOf(#"{"message":{"notification":{"body":"B"}}}"#)?["notification"] as? [String: Any])?["tag"] as? String == "bn-1")
        #expect(try androidOf(#"{"message":{"data":{"k":"v"}}}"#)?["notification"] == nil)
        let own = try androidOf(#"{"message":{"notification":{"body":"B"},"android":{"notification":{"tag":"mine"}}}}"#)
        #expect((own?["notification"] as? [String: Any])?["tag"] as? String == "mine")
        // A legacy payload without "message" is the message itself.
        let legacy = try FCMClient.message(Self.delivery(platform: .fcm, payload: #"{"data":{"k":"v"}}"#)).get()
        #expect(String(decoding: legacy, as: UTF8.self).contains(#""data":{"k":"v"}"#))
        // The members keep the payload's order; a token already there (even twice) is replaced
        // by the device's, once.
        let addressed = try FCMClient.message(
            Self.delivery(platform: .fcm, payload: #"{"data":{"k":"v"},"token":"old","apns":{},"token":"older"}"#)
        ).get()
        #expect(
            String(decoding: addressed, as: UTF8.self) == #"{"message":{"data":{"k":"v"},"token":"\#(delivery.handle)","apns":{}}}"#)
        if case .success = FCMClient.message(Self.delivery(platform: .fcm, payload: "<toast/>")) {
            Issue.record("a payload that is not JSON cannot be an FCM message")
        }
    }

    @Test("FCM answers: the FcmError code wins over the status, and a sent message's name is kept")
    func fcmAnswers() {
        let body = #"""
            {"error":{"code":404,"message":"Requested entity was not found.","status":"NOT_FOUND",
            "details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"UNREGISTERED"}]}}
            """#
        let gone = FCMClient.answer(PushResponse(status: 404, body: ByteBuffer(string: body)))
        #expect(gone.reason == "UNREGISTERED")
        #expect(FCMAnswers.verdict(gone) == .unregistered(since: nil))
        let plain = FCMClient.answer(
            PushResponse(status: 400, body: ByteBuffer(string: #"{"error":{"code":400,"status":"INVALID_ARGUMENT"}}"#)))
        #expect(plain.reason == "INVALID_ARGUMENT")
        let sent = FCMClient.answer(PushResponse(status: 200, body: ByteBuffer(string: #"{"name":"projects/p/messages/1"}"#)))
        #expect(sent.serviceId == "projects/p/messages/1")
    }

    @Test("bad credentials name the file and the field, never the key")
    func credentialErrors() throws {
        #expect(
            throws: PushConfigurationError(
                source: "k.p8", field: "PEM", problem: #"not a .p8 key: expected a "-----BEGIN PRIVATE KEY-----" block"#)
        ) {
            try APNsCredentials.make(
                pem: "garbage", keySource: "k.p8", keyId: "ABC123DEFG", teamId: "TEAM123456", topics: ["a"], endpoint: "")
        }
        do {
            _ = try APNsCredentials.make(
                pem: Self.pem, keySource: "k.p8", keyId: "short", teamId: "TEAM123456", topics: ["a"], endpoint: "production")
            Issue.record("a 5-character key id was accepted")
        } catch {
            #expect(error.field == "key id")
        }
        do {
            _ = try APNsCredentials.make(
                pem: Self.pem, keySource: "k.p8", keyId: "ABC123DEFG", teamId: "TEAM123456", topics: ["a"], endpoint: "http://plain")
            Issue.record("a plain-http endpoint was accepted")
        } catch {
            #expect(error.field == "endpoint")
        }
        #expect(try Self.credentials().endpoint.absoluteString == "https://127.0.0.1:8443")
        #expect(
            try APNsCredentials.make(
                pem: Self.pem, keySource: "k", keyId: "ABC123DEFG", teamId: "TEAM123456", topics: ["a"], endpoint: "sandbox"
            ).endpoint == APNsCredentials.sandbox)

        let rsa = try _RSA.Signing.PrivateKey(keySize: .bits2048).pemRepresentation
        let account: [String: Any] = [
            "type": "service_account", "project_id": "news", "client_email": "sender@news.iam.gserviceaccount.com",
            "private_key": rsa, "token_uri": "https://127.0.0.1:9443/token",
        ]
        let parsed = try FCMServiceAccount.parse(Array(try JSONSerialization.data(withJSONObject: account)), source: "sa.json")
        #expect(parsed.projectId == "news")
        #expect(parsed.tokenURI.absoluteString == "https://127.0.0.1:9443/token")
        var missing = account
        missing.removeValue(forKey: "private_key")
        do {
            _ = try FCMServiceAccount.parse(Array(try JSONSerialization.data(withJSONObject: missing)), source: "sa.json")
            Issue.record("a service account without its key was accepted")
        } catch {
            #expect(String(describing: error) == "sa.json: private_key: missing or not a string")
        }
    }

    @Test("the provider token is made once and reused; a refused one is replaced only when old enough")
    func providerTokenCache() async throws {
        let token = await APNsProviderToken(credentials: try Self.credentials(), refreshAfter: 3000, minimumAge: 1200)
        let start = Date()
        let first = try await token.token(now: start)
        #expect(try await token.token(now: start.addingTimeInterval(60)) == first)
        token.refused(first, now: start.addingTimeInterval(60))  // too young to replace
        #expect(try await token.token(now: start.addingTimeInterval(61)) == first)
        #expect(token.tokensMade == 1)
        token.refused(first, now: start.addingTimeInterval(1300))
        let second = try await token.token(now: start.addingTimeInterval(1300))
        #expect(second != first)
        #expect(try await token.token(now: start.addingTimeInterval(1300 + 3001)) != second)
        #expect(token.tokensMade == 3)
        // ES256 with the key id in the header and the team as issuer.
        let header = try #require(Data(base64URLEncoded: String(second.split(separator: ".")[0])))
        let fields = try #require(try JSONSerialization.jsonObject(with: header) as? [String: Any])
        #expect(fields["alg"] as? String == "ES256")
        #expect(fields["kid"] as? String == "ABC123DEFG")
    }

    /// A sender's connections ask for the token together at start: one token is made, and
    /// every caller gets it (each at its own second would otherwise sign one of its own).
    @Test("callers asking at once while there is no token share one renewal")
    func providerTokenConcurrentCallers() async throws {
        let credentials = try Self.credentials()
        for attempt in 0..<50 {
            let token = await APNsProviderToken(credentials: credentials, refreshAfter: 3000, minimumAge: 1200)
            let start = Date()
            // Every caller has its own second, so two signatures would differ.
            let tokens = try await withThrowingTaskGroup(of: String.self) { group in
                for caller in 0..<16 {
                    group.addTask { try await token.token(now: start.addingTimeInterval(Double(caller))) }
                }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            #expect(tokens.count == 1, "attempt \(attempt)")
            #expect(token.tokensMade == 1, "attempt \(attempt)")
        }
    }
}

extension Data {
    init?(base64URLEncoded text: String) {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        self.init(base64Encoded: base64)
    }
}
