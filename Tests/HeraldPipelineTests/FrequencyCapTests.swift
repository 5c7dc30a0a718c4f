import Foundation
import HeraldDomain
@testable import HeraldPipeline
import HeraldRedis
import HeraldRegistry
import HeraldTestSupport
import Testing

@Suite("Frequency caps in the fan-out", .heavy, .serialized)
struct FrequencyCapTests {
    @Test(
        "at most 2 alerts an hour, or a device's own cap: a third normal alert skips the devices that had two (capped), breaking goes through and counts, a rehearsal counts what would be capped and records nothing, alerts past the window no longer count"
    )
    func capsPerDevice() async throws {
        let caps = [FrequencyCap(maxAlerts: 2, windowSeconds: 3_600)]
        try await withPipelineHarness(
            slots: 8, configure: { $0.frequencyCaps = caps },
            body: { harness in
                var world = (0..<40).map { testRegistration("w\($0)", tags: ["World"]) }
                var sports = (0..<10).map { testRegistration("s\($0)", platform: .fcm, tags: ["Sports"]) }
                // Devices with a cap of their own: five World devices allow 3, one Sports device 1.
                for index in 0..<5 { world[index].frequencyCap = 3 }
                sports[0].frequencyCap = 1
                try await harness.seed(world + sports)
                harness.startRoles()

                func send(_ id: String, tags: String? = nil, urgency: Urgency? = nil) async throws -> StatusRecord {
                    let audience: Audience = try tags.map { .expression(try TagExpression.parse($0), source: $0) } ?? .broadcast
                    _ = try await harness.publish(
                        NotificationEvent(id: id, audience: audience, properties: ["News_English": "Summit ends"], urgency: urgency))
                    return try await harness.finalStatus(id)
                }
                #expect(try await send("fc-1", tags: "World").targets.total == 40)
                #expect(try await send("fc-2").targets.total == 50)
                // World devices have had two alerts, Sports devices one: the World devices that allow
                // 3 and the Sports devices but the one that allows 1 get the third.
                let third = try await send("fc-3")
                #expect(third.targets.total == 14 && third.targets.byPlatform == ["fcm": 9, "apns": 5], "\(third)")
                #expect(third.skippedReasons?[FrequencyCap.skipReason] == 36, "\(third)")
                #expect(
                    Set(try await harness.deliveries(eventId: "fc-3").map(\.registrationId))
                        == Set((world.prefix(5) + sports.dropFirst()).map(\.registrationId)))
                // Breaking news is not held back by a rule that does not name it, and it counts.
                let breaking = try await send("fc-4", urgency: .breaking)
                #expect(breaking.targets.total == 50 && breaking.skippedReasons?[FrequencyCap.skipReason] == nil, "\(breaking)")

                // A rehearsal resolves as the send would: everyone is capped now; it records nothing.
                let receipt = try await harness.publishReceipt(
                    NotificationEvent(id: "fc-5", properties: ["News_English": "Summit ends"]), rehearsal: true)
                let rehearsed = try await harness.finalStatus(
                    DerivedSend.rehearsal.eventId(of: "fc-5", partition: receipt.partition, offset: receipt.offset))
                #expect(rehearsed.targets.total == 0 && rehearsed.skippedReasons?[FrequencyCap.skipReason] == 50, "\(rehearsed)")

                // Two hours later, none of them counts any more.
                let layout = harness.configuration.layout
                let connection = try await RedisConnection.connect(configuration: harness.configuration.redis)
                let listed = try await connection.send(RedisCommand("ZRANGE", layout.alertsKey, "0", "-1")).array?.compactMap(\.string)
                #expect(listed.map(Set.init) == ["fc-1", "fc-2", "fc-3", "fc-4"], "the rehearsal is not an alert: \(listed ?? [])")
                let twoHoursAgo = String(Int(Date().timeIntervalSince1970 * 1_000) - 7_200_000)
                for id in listed ?? [] {
                    _ = try await connection.send(RedisCommand("ZADD", layout.alertsKey, "XX", twoHoursAgo, id))
                }
                connection.close()
                let later = try await send("fc-6")
                #expect(later.targets.total == 50 && later.skippedReasons?[FrequencyCap.skipReason] == nil, "\(later)")
                try await harness.stopRoles()
            })
    }

    @Test("a hub's own rules: one bulk alert an hour, normal alerts uncapped; the default hub without rules records nothing")
    func hubRules() async throws {
        try await withPipelineHarness(slots: 8) { harness in
            let hub = HubName("digest")!
            try await harness.createHub(hub, frequencyCaps: [FrequencyCap(maxAlerts: 1, windowSeconds: 3_600, urgencies: [.bulk])])
            var devices = (0..<6).map { testRegistration("d\($0)", tags: ["Daily"]) }
            for index in devices.indices { devices[index].hub = hub }
            try await harness.seed(devices + [testRegistration("plain", tags: ["Daily"])])
            harness.startRoles()

            func send(_ id: String, hub: HubName, urgency: Urgency) async throws -> StatusRecord {
                var event = NotificationEvent(
                    id: id, audience: .expression(.tag("Daily"), source: "Daily"), properties: ["News_English": "Your digest"],
                    hub: hub, urgency: urgency)
                event.hub = hub
                _ = try await harness.publish(event)
                return try await harness.finalStatus(id, hub: hub)
            }
            #expect(try await send("dg-1", hub: hub, urgency: .normal).targets.total == 6)
            let digest = try await send("dg-2", hub: hub, urgency: .bulk)
            #expect(digest.targets.total == 0 && digest.skippedReasons?[FrequencyCap.skipReason] == 6, "\(digest)")
            #expect(try await send("dg-3", hub: hub, urgency: .normal).targets.total == 6)
            // The default hub has no rules: its alerts are not recorded.
            #expect(try await send("plain-1", hub: .default, urgency: .bulk).targets.total == 1)
            let connection = try await RedisConnection.connect(configuration: harness.configuration.redis)
            let layout = harness.configuration.layout
            #expect(try await connection.send(RedisCommand("EXISTS", layout.alertsKey)).int == 0)
            #expect(try await connection.send(RedisCommand("ZCARD", layout.hub(hub).alertsKey)).int == 2, "dg-2 delivered nothing")
            connection.close()
            try await harness.stopRoles()
        }
    }
}

@Suite("Counting alerts per position")
struct AlertHistoryTests {
    @Test("a position is capped when the alerts in a rule's window reached its maximum; older ones do not count")
    func cappedPositions() {
        // Positions 0, 1, 9 in the first alert; 0 and 9 in the second; 0 in an old one.
        let alerts: [(ageSeconds: Int, bitmap: [UInt8])] = [
            (10, [0b1100_0000, 0b0100_0000]), (20, [0b1000_0000, 0b0100_0000]), (5_000, [0b1000_0000]),
        ]
        let hour = FrequencyCap(maxAlerts: 2, windowSeconds: 3_600)
        let capped = AlertHistory.cappedPositions(alerts: alerts, rules: [hour])
        #expect((0..<16).filter { AlertHistory.isSet(capped, $0) } == [0, 9])
        // A longer window counts the old one too: position 0 reached 3.
        let day = FrequencyCap(maxAlerts: 3, windowSeconds: 86_400)
        #expect((0..<16).filter { AlertHistory.isSet(AlertHistory.cappedPositions(alerts: alerts, rules: [day]), $0) } == [0])
        // Either rule caps.
        let both = AlertHistory.cappedPositions(alerts: alerts, rules: [day, hour])
        #expect((0..<16).filter { AlertHistory.isSet(both, $0) } == [0, 9])
        #expect(AlertHistory.cappedPositions(alerts: [], rules: [hour]).isEmpty)
    }

    @Test("recorded positions set the bits a Redis bitmap would")
    func recording() {
        var history = AlertHistory(rules: [], keepSeconds: 60, slots: 0..<8)
        for position in [0, 7, 8, 100] { history.recordDelivery(slot: 3, position: position) }
        #expect(history.delivered[3] == [0b1000_0001, 0b1000_0000] + [UInt8](repeating: 0, count: 10) + [0b0000_1000])
        #expect(!history.isCapped(slot: 3, position: 0))
    }
}
