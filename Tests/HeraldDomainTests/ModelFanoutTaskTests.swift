import Foundation
import Testing
@testable import HeraldDomain

@Suite("Fan-out tasks")
struct ModelFanoutTaskTests {
    @Test("a task with its embedded event survives JSON")
    func roundTrip() throws {
        let event = try NotificationEvent.decode(ModelFixtures.bytes(ModelFixtures.contractEvent))
        let task = FanoutTask(
            eventId: "bn-2026-11-21-0001", taskIndex: 3, taskCount: 8, slots: 96..<128,
            event: event, plannedAt: ModelFixtures.date("2026-11-21T18:00:00.125Z")
        )
        let data = try JSONEncoder().encode(task)
        let decoded = try JSONDecoder().decode(FanoutTask.self, from: data)
        #expect(decoded == task)
        #expect(decoded.slots == 96..<128)
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains(#""plannedAt":"2026-11-21T18:00:00.125Z""#))
        #expect(text.contains(#""slotLower":96"#))
    }

    @Test("a broadcast event has no tags field")
    func broadcast() throws {
        let task = FanoutTask(
            eventId: "e", taskIndex: 0, taskCount: 1, slots: 0..<256, event: NotificationEvent(id: "e"),
            plannedAt: Date(timeIntervalSince1970: 0))
        let data = try JSONEncoder().encode(task)
        #expect(!String(decoding: data, as: UTF8.self).contains("tags"))
        #expect(try JSONDecoder().decode(FanoutTask.self, from: data).event.audience == .broadcast)
    }

    @Test("the task copy is read by the event's own reader: limits wider than the defaults pass, a broken copy names its field")
    func trustedCopies() throws {
        // Accepted at the door of a deployment configured with a 16 KB APNs limit.
        let wide = "{\"tags\":\"a\",\"native\":{\"apns\":{\"aps\":{\"alert\":\"\(String(repeating: "x", count: 10_000))\"}}}}"
        let limits = EventLimits(payloadLimits: PayloadLimits(apns: 16_384))
        let event = try NotificationEvent.decode(Array(wide.utf8), limits: limits)
        #expect(throws: ValidationFailure.self) { try NotificationEvent.decode(Array(wide.utf8)) }
        let task = FanoutTask(
            eventId: "e", taskIndex: 0, taskCount: 1, slots: 0..<256, event: event, plannedAt: Date(timeIntervalSince1970: 0))
        #expect(try JSONDecoder().decode(FanoutTask.self, from: JSONEncoder().encode(task)) == task)

        let encoded = String(decoding: try JSONEncoder().encode(task), as: UTF8.self)
        let broken = Data(encoded.replacingOccurrences(of: "\"apns\"", with: "\"blackberry\"").utf8)
        #expect {
            try JSONDecoder().decode(FanoutTask.self, from: broken)
        } throws: { error in
            "\(error)".contains("native.blackberry")
        }
    }
}
