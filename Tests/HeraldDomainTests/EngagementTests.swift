import Foundation
import HeraldDomain
import Testing

@Suite("engagements: what readers did with an alert, and the funnel they make")
struct EngagementTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func requestsAndRecordsRoundTrip() throws {
        let sports = try #require(HubName("sports"))
        let body = #"{"action":"dismissed","installationId":"inst-1","at":"2027-01-15T07:59:00Z"}"#
        var engagement = try Engagement.decodeRequest(Array(body.utf8), eventId: "bn-1", hub: sports, now: Self.now)
        #expect(engagement.action == .dismissed && engagement.device == .installation("inst-1"))
        #expect(engagement.at == Date(timeIntervalSince1970: 1_800_000_000 - 60))
        #expect(engagement.recordKey == "sports/bn-1/inst-1/dismissed")
        engagement.platform = .fcm
        #expect(try Engagement.decodeRecord(engagement.jsonBytes()) == engagement)
        // Without `at`, the API's clock.
        let opened = try Engagement.decodeRequest(
            Array(#"{"action":"opened","registrationId":"r1"}"#.utf8), eventId: "e", hub: .default, now: Self.now)
        #expect(opened.at == Self.now && opened.recordKey == "e/r1/opened")
    }

    @Test func badRequestsNameTheirField() {
        for (body, field) in [
            (#"{"action":"opened","registrationId":"a/b"}"#, "registrationId"),
            (#"{"action":"read","registrationId":"r1"}"#, "action"),
            (#"{"action":"opened","registrationId":"r1","at":"2027-01-15T09:00:00Z"}"#, "at"),
            (#"{"action":"opened","registrationId":"r1","extra":1}"#, "extra"),
        ] {
            #expect(throws: ValidationFailure.self, "\(body)") {
                try Engagement.decodeRequest(Array(body.utf8), eventId: "e", hub: .default, now: Self.now)
            }
            do {
                _ = try Engagement.decodeRequest(Array(body.utf8), eventId: "e", hub: .default, now: Self.now)
            } catch {
                #expect(error.issues.contains { $0.field == field }, "\(body): \(error.issues)")
            }
        }
    }

    @Test func theFunnelCountsOpensByPlatformTemplateAndTime() throws {
        var fields: [String: Int] = [:]
        let published = Self.now
        for (offset, platform, template, action) in [
            (1.234, Platform.apns, "newsFrench", Engagement.Action.opened), (3.0, .fcm, "newsEnglish", .opened),
            (9.0, .apns, "newsFrench", .opened), (2.0, .apns, "newsFrench", .dismissed),
        ] {
            let engagement = Engagement(
                eventId: "e", action: action, device: .registration("r\(offset)"), at: published.addingTimeInterval(offset),
                platform: platform, template: template)
            for field in EngagementFunnel.fields(of: engagement, publishedAt: published) { fields[field, default: 0] += 1 }
        }
        let funnel = try #require(EngagementFunnel(fields: fields, sent: 6))
        #expect(funnel.opened == 3 && funnel.dismissed == 1 && funnel.openRate == 0.5)
        #expect(funnel.openedByPlatform == ["apns": 2, "fcm": 1] && funnel.openedByTemplate == ["newsFrench": 2, "newsEnglish": 1])
        #expect(funnel.medianTimeToOpenMs == 3_000, "opens at 1.23, 3 and 9 s")
        #expect(EngagementFunnel(fields: [:], sent: 3) == nil)
        #expect(EngagementFunnel.median([(10, 1), (20, 1)]) == 10 && EngagementFunnel.median([]) == nil)
    }
}
