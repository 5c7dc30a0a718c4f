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
}
