import Foundation
import HeraldDomain
import HeraldPipeline
import HeraldTestSupport
import Testing

/// Live Activity and push-to-start tokens through the fan-out: each receives only the events
/// meant for its kind, as APNs liveactivity pushes built from the event; devices skip them.
@Suite("Live Activities through the fan-out", .heavy, .serialized)
struct LiveActivityFanoutTests {
    static func token(_ byte: Int) -> String { String(repeating: String(format: "%02x", byte), count: 32) }

    @Test func updatesReachActivityTokensStartsReachPushToStartTokensAndAlertsReachDevices() async throws {
        try await withPipelineHarness(slots: 8) { harness in
            try await harness.seed([
                Registration(
                    registrationId: "activity-1", platform: .apns, handle: Self.token(1), tags: ["Match_ARS_CHE"], version: 1,
                    tokenKind: .liveActivity),
                Registration(
                    registrationId: "activity-2", platform: .apns, handle: Self.token(2), tags: ["Match_ARS_CHE"], version: 1,
                    tokenKind: .liveActivity),
                Registration(
                    registrationId: "starter", platform: .apns, handle: Self.token(3), tags: ["Match_ARS_CHE"], version: 1,
                    tokenKind: .pushToStart),
                testRegistration("phone", tags: ["Match_ARS_CHE"], language: "English"),
            ])
            harness.startRoles()
            let audience = Audience.expression(.tag("Match_ARS_CHE"), source: "Match_ARS_CHE")
            let published = Date(timeIntervalSince1970: 1_795_900_000)
            let goal = NotificationEvent(
                id: "la-goal", audience: audience, priority: .high, publishedAt: published,
                liveActivity: LiveActivityUpdate(event: .update, contentState: .object([JSONMember(key: "home", value: .number("1"))])))
            let kickoff = NotificationEvent(
                id: "la-start", audience: audience, publishedAt: published,
                liveActivity: LiveActivityUpdate(
                    event: .start, contentState: .object([]), attributesType: "MatchAttributes", attributes: .object([]),
                    alert: .object([JSONMember(key: "title", value: .string("Kick-off"))])))
            let alert = NotificationEvent(id: "la-alert", audience: audience, properties: ["News_English": "Match starts soon"])
            for event in [goal, kickoff, alert] { _ = try await harness.publish(event) }
            let goalStatus = try await harness.finalStatus("la-goal")
            let alertStatus = try await harness.finalStatus("la-alert")
            _ = try await harness.finalStatus("la-start")
            try await harness.stopRoles()

            let updates = try await harness.deliveries(eventId: "la-goal")
            #expect(Set(updates.map(\.registrationId)) == ["activity-1", "activity-2"])
            for record in updates {
                #expect(record.template == "$liveActivity")
                #expect(record.headers["apns-push-type"] == "liveactivity" && record.headers["apns-priority"] == "10")
                #expect(record.payload == #"{"aps":{"timestamp":1795900000,"event":"update","content-state":{"home":1}}}"#)
            }
            #expect(goalStatus.targets.total == 2 && goalStatus.skipped == 2)
            let starts = try await harness.deliveries(eventId: "la-start")
            #expect(starts.map(\.registrationId) == ["starter"])
            #expect(starts.first?.payload.contains(#""event":"start""#) == true)
            let alerts = try await harness.deliveries(eventId: "la-alert")
            #expect(alerts.map(\.registrationId) == ["phone"])
            #expect(alertStatus.skipped == 3)
        }
    }
}
