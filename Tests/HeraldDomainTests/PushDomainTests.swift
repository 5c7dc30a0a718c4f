import Foundation
import HeraldDomain
import Testing

/// The sender's rules, pure: what each APNs and FCM answer means, when a delivery is tried
/// again, and when an "unregistered" answer may remove a registration.
@Suite("Push answers, retries and token invalidation")
struct PushDomainTests {
    static let now = ISO8601Timestamp.parse("2026-11-25T08:00:00Z")!

    static func delivery() -> DeliveryRecord {
        DeliveryRecord(
            eventId: "evt-2", registrationId: "r2", platform: .fcm, handle: "token", template: "news", payload: "{}", headers: [:],
            expiresAt: now.addingTimeInterval(-5), publishedAt: nil, renderedAt: now)
    }

    @Test(
        "APNs: 200 sent; 410 and BadDeviceToken unregistered; DeviceTokenNotForTopic and other 4xx rejected; provider-token 403s renew; 429 and 5xx retry"
    )
    func apnsAnswers() {
        let gone = Self.now.addingTimeInterval(-60)
        #expect(APNsAnswers.verdict(PushAnswer(statusCode: 200, serviceId: "id")) == .sent)
        #expect(
            APNsAnswers.verdict(PushAnswer(statusCode: 410, reason: "Unregistered", unregisteredAt: gone)) == .unregistered(since: gone))
        #expect(APNsAnswers.verdict(PushAnswer(statusCode: 410, reason: "ExpiredToken")) == .unregistered(since: nil))
        #expect(APNsAnswers.verdict(PushAnswer(statusCode: 400, reason: "BadDeviceToken")) == .unregistered(since: nil))
        for reason in ["DeviceTokenNotForTopic", "BadTopic", "PayloadEmpty", "BadCollapseId", "TopicDisallowed"] {
            #expect(APNsAnswers.verdict(PushAnswer(statusCode: 400, reason: reason)) == .rejected(reason: reason))
        }
        #expect(APNsAnswers.verdict(PushAnswer(statusCode: 413, reason: "PayloadTooLarge")) == .rejected(reason: "PayloadTooLarge"))
        for reason in ["ExpiredProviderToken", "InvalidProviderToken", "MissingProviderToken"] {
            #expect(APNsAnswers.verdict(PushAnswer(statusCode: 403, reason: reason)) == .renewCredentials(reason: reason))
        }
        #expect(
            APNsAnswers.verdict(PushAnswer(statusCode: 403, reason: "BadCertificateEnvironment"))
                == .failed(reason: "BadCertificateEnvironment"))
        #expect(
            APNsAnswers.verdict(PushAnswer(statusCode: 429, reason: "TooManyRequests", retryAfter: 7))
                == .retry(reason: "TooManyRequests", after: 7))
        #expect(APNsAnswers.verdict(PushAnswer(statusCode: 503, reason: "ServiceUnavailable")).isRetryable)
        #expect(APNsAnswers.verdict(PushAnswer(statusCode: 500)) == .retry(reason: "HTTP 500", after: nil))
    }

    @Test(
        "FCM: only UNREGISTERED removes; INVALID_ARGUMENT and SENDER_ID_MISMATCH rejected; 401 renews; quota and 5xx retry with Retry-After"
    )
    func fcmAnswers() {
        #expect(FCMAnswers.verdict(PushAnswer(statusCode: 200, serviceId: "projects/p/messages/1")) == .sent)
        #expect(FCMAnswers.verdict(PushAnswer(statusCode: 404, reason: "UNREGISTERED")) == .unregistered(since: nil))
        // A 404 without UNREGISTERED (a wrong project in the path) removes nothing.
        #expect(FCMAnswers.verdict(PushAnswer(statusCode: 404, reason: "NOT_FOUND")) == .rejected(reason: "NOT_FOUND"))
        #expect(FCMAnswers.verdict(PushAnswer(statusCode: 400, reason: "INVALID_ARGUMENT")) == .rejected(reason: "INVALID_ARGUMENT"))
        #expect(FCMAnswers.verdict(PushAnswer(statusCode: 403, reason: "SENDER_ID_MISMATCH")) == .rejected(reason: "SENDER_ID_MISMATCH"))
        #expect(
            FCMAnswers.verdict(PushAnswer(statusCode: 401, reason: "THIRD_PARTY_AUTH_ERROR")) == .failed(reason: "THIRD_PARTY_AUTH_ERROR"))
        #expect(FCMAnswers.verdict(PushAnswer(statusCode: 401, reason: "UNAUTHENTICATED")) == .renewCredentials(reason: "UNAUTHENTICATED"))
        #expect(
            FCMAnswers.verdict(PushAnswer(statusCode: 429, reason: "QUOTA_EXCEEDED", retryAfter: 12))
                == .retry(reason: "QUOTA_EXCEEDED", after: 12))
        #expect(FCMAnswers.verdict(PushAnswer(statusCode: 503, reason: "UNAVAILABLE")) == .retry(reason: "UNAVAILABLE", after: nil))
        for verdict in [PushVerdict.rejected(reason: ""), .failed(reason: ""), .unregistered(since: nil), .sent] {
            #expect(!verdict.isRetryable)
        }
    }

    @Test("retries: exponential with full jitter under a cap, never before Retry-After, bounded attempts, never past expiresAt")
    func retries() {
        let policy = PushRetryPolicy(maxAttempts: 4, baseDelay: 0.5, maxDelay: 4, maxRetryAfter: 60)
        #expect(policy.delay(afterAttempt: 1, retryAfter: nil, unit: 1) == 0.5)
        #expect(policy.delay(afterAttempt: 3, retryAfter: nil, unit: 1) == 2)
        #expect(policy.delay(afterAttempt: 9, retryAfter: nil, unit: 1) == 4)
        #expect(policy.delay(afterAttempt: 3, retryAfter: nil, unit: 0.25) == 0.5)
        #expect(policy.delay(afterAttempt: 1, retryAfter: 10, unit: 0.9) == 10)

        #expect(
            policy.next(afterAttempt: 1, reason: "503", retryAfter: nil, now: Self.now, expiresAt: nil, unit: 1)
                == .retry(at: Self.now.addingTimeInterval(0.5)))
        #expect(
            policy.next(afterAttempt: 4, reason: "TooManyRequests", retryAfter: nil, now: Self.now, expiresAt: nil, unit: 0)
                == .giveUp(.failed, reason: "TooManyRequests (after 4 attempts)"))
        guard
            case .giveUp(.failed, let long) = policy.next(
                afterAttempt: 1, reason: "QUOTA_EXCEEDED", retryAfter: 600, now: Self.now, expiresAt: nil, unit: 0)
        else {
            Issue.record("a Retry-After over the limit gives up")
            return
        }
        #expect(long.contains("600 s"))
        guard
            case .giveUp(.expired, let expired) = policy.next(
                afterAttempt: 1, reason: "503", retryAfter: 30, now: Self.now, expiresAt: Self.now.addingTimeInterval(20), unit: 0)
        else {
            Issue.record("a retry after expiresAt ends expired")
            return
        }
        #expect(expired.contains("2026-11-25T08:00:20"))
    }

    @Test("an unregistered answer removes a registration only if it still holds the pushed handle and has not changed since")
    func tokenInvalidation() {
        func registration(handle: String, writtenAt: Date) -> Registration {
            Registration(
                registrationId: "r1", platform: .apns, handle: handle, tags: ["World"],
                version: Int64(writtenAt.timeIntervalSince1970 * 1_000_000))
        }
        let pushed = String(repeating: "ab", count: 32)
        let sentAt = Self.now
        #expect(
            TokenInvalidation.mayRemove(
                current: registration(handle: pushed, writtenAt: sentAt.addingTimeInterval(-3_600)), pushedHandle: pushed,
                invalidSince: sentAt))
        // Re-registered after the push (same or another token): kept.
        #expect(
            !TokenInvalidation.mayRemove(
                current: registration(handle: pushed, writtenAt: sentAt.addingTimeInterval(5)), pushedHandle: pushed, invalidSince: sentAt))
        #expect(
            !TokenInvalidation.mayRemove(
                current: registration(handle: String(repeating: "cd", count: 32), writtenAt: sentAt.addingTimeInterval(-3_600)),
                pushedHandle: pushed, invalidSince: sentAt))
        // APNs's 410 timestamp: a write after the token died but before the push is kept too.
        let diedAt = sentAt.addingTimeInterval(-600)
        #expect(
            !TokenInvalidation.mayRemove(
                current: registration(handle: pushed, writtenAt: diedAt.addingTimeInterval(60)), pushedHandle: pushed, invalidSince: diedAt)
        )
        #expect(!TokenInvalidation.mayRemove(current: nil, pushedHandle: pushed, invalidSince: sentAt))
    }

    @Test("a receipt round-trips through its JSON; a platform without a sender gets a failed receipt that says so")
    func receipts() throws {
        let receipt = PushReceipt(
            deliveryId: "evt-1:r1:news", eventId: "evt-1", registrationId: "r1", platform: .apns, outcome: .unregistered,
            statusCode: 410, reason: "Unregistered", attempts: 2, latencyMs: 41, unregisteredAt: Self.now.addingTimeInterval(-60),
            decidedAt: Self.now)
        let json = try JSONEncoder().encode(receipt)
        #expect(try JSONDecoder().decode(PushReceipt.self, from: json) == receipt)
        let text = String(decoding: json, as: UTF8.self)
        #expect(text.contains(#""outcome":"unregistered""#) && text.contains(#""unregisteredAt":"2026-11-25T07:59:00.000Z""#))
        #expect(!text.contains("serviceId"))
        // The hand-written encoder writes what JSONEncoder writes with sorted keys.
        let sorted = JSONEncoder()
        sorted.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var sent = receipt
        sent.outcome = .sent
        sent.serviceId = "5D0F8C1E-3A47-5B52-9E61-0C2D7A94B318"
        sent.unregisteredAt = nil
        sent.reason = #"a "quoted" reason"#
        for each in [receipt, sent, PushReceipt.expired(Self.delivery(), at: Self.now)] {
            #expect(String(decoding: each.encoded(), as: UTF8.self) == String(decoding: try sorted.encode(each), as: UTF8.self))
            #expect(try JSONDecoder().decode(PushReceipt.self, from: Data(each.encoded())) == each)
        }

        let wns = DeliveryRecord(
            eventId: "evt-1", registrationId: "w1", platform: .wns, handle: "https://wns.example/channel", template: "news",
            payload: "<toast/>", headers: [:], expiresAt: Self.now.addingTimeInterval(-1), publishedAt: nil, renderedAt: Self.now)
        let skipped = PushReceipt.noSender(for: wns, at: Self.now)
        #expect(skipped.outcome == .failed && skipped.attempts == 0 && skipped.deliveryId == wns.deliveryId)
        #expect(skipped.reason?.hasPrefix("no_sender: Herald has no wns sender") == true)
        let expired = PushReceipt.expired(wns, at: Self.now)
        #expect(expired.outcome == .expired && expired.reason?.contains("2026-11-25T07:59:59.000Z") == true)
    }
}
