import Crypto
import Foundation
import HeraldDomain
import Testing

@testable import HeraldPush

/// RFC 8291's message encryption, checked against the RFC's own example (Appendix A), and the
/// VAPID token's shape (RFC 8292).
struct WebPushEncryptionTests {
    static func bytes(_ base64url: String) throws -> [UInt8] { try #require(Base64URL.decode(base64url)) }

    /// The browser of Appendix A.
    static func subscription() throws -> WebPushSubscription {
        WebPushSubscription(
            endpoint: "https://push.example.net/push/JzLQ3raZJfFBR0aqvOMsLrt54w4rJUsV",
            p256dh: try bytes("BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"),
            auth: try bytes("BTBZMqHH6r4Tts7J_aSIgg"))
    }

    @Test("RFC 8291 Appendix A: the same keys, salt and plaintext give the RFC's body byte for byte")
    func rfcExample() throws {
        let serverKey = try P256.KeyAgreement.PrivateKey(rawRepresentation: try Self.bytes("yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw"))
        #expect(
            Base64URL.encode(serverKey.publicKey.x963Representation)
                == "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8")
        let body = try WebPushEncryption.encrypt(
            Array("When I grow up, I want to be a watermelon".utf8), for: try Self.subscription(), serverKey: serverKey,
            salt: try Self.bytes("DGv6ra1nlYgDCS1FRnbzlw"))
        #expect(
            Base64URL.encode(body)
                == "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN"
        )
        #expect(body.count == 144)
    }

    @Test("each message has its own salt and server key; the largest plaintext fits 4,096 bytes and one byte more is refused")
    func freshAndBounded() throws {
        let subscription = try Self.subscription()
        let first = try WebPushEncryption.encrypt(Array("same".utf8), for: subscription)
        let second = try WebPushEncryption.encrypt(Array("same".utf8), for: subscription)
        #expect(first[0..<16] != second[0..<16])
        #expect(first[21..<86] != second[21..<86])
        let largest = try WebPushEncryption.encrypt(
            [UInt8](repeating: 0x41, count: WebPushEncryption.maximumPlaintextBytes), for: subscription)
        #expect(largest.count == 4096)
        #expect(throws: WebPushEncryption.Failure.tooLarge(bytes: 3994)) {
            try WebPushEncryption.encrypt([UInt8](repeating: 0x41, count: 3994), for: subscription)
        }
    }

    @Test("a p256dh that is not a point on P-256 is refused, not encrypted for")
    func offCurveKey() throws {
        var subscription = try Self.subscription()
        subscription.p256dh = [0x04] + [UInt8](repeating: 0x01, count: 64)
        #expect(throws: WebPushEncryption.Failure.unusableKey) { try WebPushEncryption.encrypt(Array("x".utf8), for: subscription) }
    }

    @Test("VAPID: callers that ask at once for an origin without a token all send the same one")
    func vapidTokensAtOnce() async throws {
        let key = P256.Signing.PrivateKey()
        let credentials = try VAPIDCredentials.make(
            privateKey: Base64URL.encode(key.rawRepresentation), subject: "mailto:desk@example.com", source: "test")
        let tokens = try await VAPIDTokens(credentials: credentials)
        let headers = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<16 { group.addTask { try await tokens.authorization(origin: "https://push.example.net") } }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(headers.count == 1)
    }

    @Test("VAPID: one ES256 token per origin, reused, with aud, a 12-hour exp and sub; renewed once refused")
    func vapidTokens() async throws {
        let key = P256.Signing.PrivateKey()
        let credentials = try VAPIDCredentials.make(
            privateKey: Base64URL.encode(key.rawRepresentation), subject: "mailto:desk@example.com", source: "test")
        let tokens = try await VAPIDTokens(credentials: credentials)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let header = try await tokens.authorization(origin: "https://push.example.net", now: now)
        #expect(try await tokens.authorization(origin: "https://push.example.net", now: now.addingTimeInterval(3600)) == header)
        #expect(tokens.tokensMade == 1)
        _ = try await tokens.authorization(origin: "https://fcm.googleapis.com", now: now)
        #expect(tokens.tokensMade == 2)

        let parts = header.split(separator: " ")
        #expect(parts.count == 3 && parts[0] == "vapid")
        let jwt = String(parts[1].dropFirst("t=".count).dropLast())
        #expect(String(parts[2]) == "k=" + credentials.publicKey)
        let segments = jwt.split(separator: ".").map(String.init)
        #expect(segments.count == 3)
        let claims = try #require(
            try JSONSerialization.jsonObject(with: Data(try Self.bytes(segments[1]))) as? [String: Any])
        #expect(claims["aud"] as? String == "https://push.example.net")
        #expect((claims["exp"] as? NSNumber)?.doubleValue == now.timeIntervalSince1970 + 12 * 3600)
        #expect(claims["sub"] as? String == "mailto:desk@example.com")
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: try Self.bytes(segments[2]))
        #expect(key.publicKey.isValidSignature(signature, for: Data("\(segments[0]).\(segments[1])".utf8)))

        tokens.refused(header, origin: "https://push.example.net")
        _ = try await tokens.authorization(origin: "https://push.example.net", now: now.addingTimeInterval(7200))
        #expect(tokens.tokensMade == 3)
        _ = try await tokens.authorization(origin: "https://push.example.net", now: now.addingTimeInterval(7200 + 11 * 3600))
        #expect(tokens.tokensMade == 4)
    }

    @Test(
        "VAPID settings: a key that is not a P-256 scalar or a subject that is not mailto:/https: is refused with the field named",
        arguments: [
            ("AAAA", "mailto:desk@example.com", "private key"),
            (String(repeating: "A", count: 43), "mailto:desk@example.com", "private key"),
            ("yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw", "mailto: <desk@example.com>", "subject"),
            ("yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw", "http://example.com", "subject"),
        ])
    func vapidSettings(key: String, subject: String, field: String) {
        do {
            _ = try VAPIDCredentials.make(privateKey: key, subject: subject, source: "HERALD_WEBPUSH_VAPID_KEY")
            Issue.record("accepted \(key) / \(subject)")
        } catch {
            #expect(error.field == field, "\(error)")
        }
    }
}
