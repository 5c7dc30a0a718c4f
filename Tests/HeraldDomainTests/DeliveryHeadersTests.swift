import Foundation
import Testing
@testable import HeraldDomain

@Suite("Delivery headers")
struct DeliveryHeadersTests {
    static let now = ModelFixtures.date("2026-11-21T18:00:00Z")
    static let inOneHour = ModelFixtures.date("2026-11-21T19:00:00Z")

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var platform: Platform
        var priority: NotificationPriority?
        var expiresAt: Date? = nil
        var collapseId: String? = nil
        var replaceKey: String? = nil
        var templateHeaders: [String: String] = [:]
        var bodyFormat: TemplateFormat = .json
        var expected: [(String, String)]
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        // An alert without a priority is sent at 10, Apple's default: iOS must not hold breaking news.
        Case(name: "APNs defaults", platform: .apns, expected: [("apns-push-type", "alert"), ("apns-priority", "10")]),
        Case(
            name: "APNs normal alert", platform: .apns, priority: .normal, expected: [("apns-push-type", "alert"), ("apns-priority", "5")]),
        Case(
            name: "APNs background without a priority is 5", platform: .apns, templateHeaders: ["apns-push-type": "background"],
            expected: [("apns-push-type", "background"), ("apns-priority", "5")]),
        Case(
            name: "TTLs are capped at each service's maximum", platform: .fcm, expiresAt: ModelFixtures.date("2030-01-01T00:00:00Z"),
            expected: [("fcm-priority", "normal"), ("fcm-ttl", "2419200s")]),
        Case(
            name: "WNS TTL capped at 30 days", platform: .wns, expiresAt: ModelFixtures.date("2030-01-01T00:00:00Z"), bodyFormat: .xml,
            expected: [("X-WNS-Type", "wns/toast"), ("X-WNS-TTL", "2592000")]),
        Case(
            name: "web push TTL capped at 28 days", platform: .webpush, expiresAt: ModelFixtures.date("2030-01-01T00:00:00Z"),
            expected: [("Urgency", "normal"), ("TTL", "2419200")]),
        Case(
            name: "APNs high, expiring, collapsing", platform: .apns, priority: .high, expiresAt: inOneHour, collapseId: "summit",
            expected: [
                ("apns-push-type", "alert"), ("apns-priority", "10"), ("apns-expiration", "1795287600"), ("apns-collapse-id", "summit"),
            ]),
        Case(
            name: "APNs template push type wins; background forces priority 5", platform: .apns, priority: .high,
            templateHeaders: ["apns-push-type": "background", "apns-topic": "com.example.news"],
            expected: [("apns-push-type", "background"), ("apns-priority", "5"), ("apns-topic", "com.example.news")]),
        Case(
            name: "APNs event beats template for priority and collapse id", platform: .apns, priority: .high, collapseId: "e",
            templateHeaders: ["APNS-Priority": "5", "apns-collapse-id": "t", "apns-expiration": "0"],
            expected: [("apns-push-type", "alert"), ("apns-priority", "10"), ("apns-expiration", "0"), ("apns-collapse-id", "e")]),
        Case(
            name: "FCM", platform: .fcm, priority: .high, expiresAt: inOneHour, collapseId: "summit",
            expected: [("fcm-priority", "high"), ("fcm-ttl", "3600s"), ("fcm-collapse-key", "summit"), ("fcm-tag", "summit")]),
        Case(
            name: "FCM past expiry clamps to zero", platform: .fcm, expiresAt: ModelFixtures.date("2026-11-21T17:00:00Z"),
            expected: [("fcm-priority", "normal"), ("fcm-ttl", "0s")]),
        Case(
            name: "WNS toast by default for XML", platform: .wns, expiresAt: inOneHour, bodyFormat: .xml,
            expected: [("X-WNS-Type", "wns/toast"), ("X-WNS-TTL", "3600")]),
        Case(
            name: "WNS template type wins", platform: .wns, templateHeaders: ["X-WNS-Type": "wns/badge"], bodyFormat: .xml,
            expected: [("X-WNS-Type", "wns/badge")]),
        Case(name: "WNS raw for non-XML", platform: .wns, expected: [("X-WNS-Type", "wns/raw")]),
        Case(
            name: "WNS tag and group from the collapse id", platform: .wns, collapseId: "summit-2026", bodyFormat: .xml,
            expected: [("X-WNS-Type", "wns/toast"), ("X-WNS-Tag", "summit-2026"), ("X-WNS-Group", "summit-2026")]),
        Case(
            name: "WNS collapse id over 16 characters becomes its hash", platform: .wns, collapseId: String(repeating: "t", count: 17),
            bodyFormat: .xml,
            expected: [("X-WNS-Type", "wns/toast"), ("X-WNS-Tag", "ec1048f6afc06723"), ("X-WNS-Group", "ec1048f6afc06723")]),
        Case(
            name: "web push", platform: .webpush, priority: .high, expiresAt: inOneHour, collapseId: "summit",
            expected: [("Urgency", "high"), ("TTL", "3600"), ("Topic", "summit")]),
        Case(
            name: "web push default TTL; a topic too long becomes its hash", platform: .webpush,
            collapseId: String(repeating: "t", count: 33),
            expected: [("Urgency", "normal"), ("TTL", "2419200"), ("Topic", "e8d81928e103eba3")]),
        // Without a collapse id, the replace key (the event id) goes in every replace header, so
        // a correction can replace the alert; FCM's collapse key stays the publisher's alone.
        Case(
            name: "APNs replace key", platform: .apns, replaceKey: "bn-2026-11-21-0001",
            expected: [("apns-push-type", "alert"), ("apns-priority", "10"), ("apns-collapse-id", "bn-2026-11-21-0001")]),
        Case(
            name: "FCM replace key is the notification tag, not a collapse key", platform: .fcm, replaceKey: "bn-2026-11-21-0001",
            expected: [("fcm-priority", "normal"), ("fcm-tag", "bn-2026-11-21-0001")]),
        Case(
            name: "WNS replace key hashed to fit 16 characters", platform: .wns, replaceKey: "bn-2026-11-21-0001", bodyFormat: .xml,
            expected: [("X-WNS-Type", "wns/toast"), ("X-WNS-Tag", "af6cb55422b25bed")]),
        Case(
            name: "web push replace key", platform: .webpush, replaceKey: "bn-2026-11-21-0001",
            expected: [("Urgency", "normal"), ("TTL", "2419200"), ("Topic", "bn-2026-11-21-0001")]),
        Case(
            name: "a template's replace header beats the replace key", platform: .apns, replaceKey: "bn-1",
            templateHeaders: ["apns-collapse-id": "t"],
            expected: [("apns-push-type", "alert"), ("apns-priority", "10"), ("apns-collapse-id", "t")]),
    ]

    @Test("headers per platform", arguments: cases)
    func headers(_ testCase: Case) {
        let headers = DeliveryHeaders.forDelivery(
            platform: testCase.platform, priority: testCase.priority, expiresAt: testCase.expiresAt,
            collapseId: testCase.collapseId, replaceKey: testCase.replaceKey, templateHeaders: testCase.templateHeaders,
            bodyFormat: testCase.bodyFormat, now: Self.now
        )
        #expect(headers.fields.map { "\($0.name): \($0.value)" } == testCase.expected.map { "\($0.0): \($0.1)" })
    }

    @Test("the event overload uses the event's priority, expiry and collapse id")
    func fromEvent() throws {
        let event = try NotificationEvent.decode(ModelFixtures.bytes(ModelFixtures.contractEvent))
        let headers = DeliveryHeaders.forDelivery(
            platform: .apns, event: event, templateHeaders: ["apns-push-type": "alert"], bodyFormat: .json, now: Self.now)
        #expect(headers["apns-priority"] == "10")
        #expect(headers["APNS-COLLAPSE-ID"] == "summit")
        #expect(headers["apns-expiration"] == "1795287600")
    }

    @Test("equality ignores order, not content")
    func equality() {
        let a: DeliveryHeaders = ["a": "1", "b": "2"]
        #expect(a == ["b": "2", "a": "1"])
        #expect(a != ["a": "1", "b": "3"])
        #expect(a != ["a": "1"])
    }
}
