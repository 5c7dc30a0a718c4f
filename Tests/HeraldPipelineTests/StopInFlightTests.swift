import Foundation
import HeraldDomain
import HeraldPipeline
import HeraldRedis
import HeraldRegistry
import HeraldTestSupport
import Testing

@Suite("Stopping an event in flight", .heavy, .serialized)
struct StopInFlightTests {
    /// The planner plans the event, the stop is set (as `DELETE /v1/notifications/{id}` sets it),
    /// then the fan-out starts: every task finds the stop before its first page, nothing is
    /// delivered, and the status ends `cancelled` once every task reported. The next event is
    /// not touched.
    @Test func tasksThatFindTheStopDeliverNothingAndTheStatusSaysCancelled() async throws {
        try await withPipelineHarness(
            slots: 8, configure: { $0.plannerDeliversNarrowEvents = false },
            body: { harness in
                try await harness.seed((0..<40).map { testRegistration("r\($0)", tags: ["World"]) })
                harness.startRoles(planner: true, fanout: false)
                let event = NotificationEvent(id: "stop-1", audience: .broadcast, properties: ["News_English": "Wrong"], native: [:])
                _ = try await harness.publish(event)
                let reader = StatusReader(pool: harness.pool, layout: harness.configuration.layout)
                let accepted = try await waitWhileProgressing("stop-1 planned", stallLimit: .seconds(120)) {
                    () async throws -> ProgressCheck<StatusRecord?, StatusRecord> in
                    let status = try await reader.status(eventId: "stop-1", hub: .default)
                    if let status, status.state == .accepted { return .done(status) }
                    return .waiting(status)
                }
                #expect(accepted.tasks.planned > 0)
                let key = harness.configuration.layout.stopKey(eventId: "stop-1")
                _ = try await harness.pool.withConnection { try await $0.send(RedisCommand("SET", key, "1", "EX", "600")) }
                harness.startRoles(planner: false, fanout: true)

                let stopped = try await harness.finalStatus("stop-1")
                #expect(stopped.state == .cancelled)
                #expect(stopped.tasks.completed == accepted.tasks.planned)
                #expect(stopped.targets.total == 0)
                #expect(
                    stopped.reason?.hasPrefix("stopped in flight: \(accepted.tasks.planned) of \(accepted.tasks.planned) tasks") == true)

                _ = try await harness.publish(
                    NotificationEvent(id: "go-1", audience: .broadcast, properties: ["News_English": "Right"], native: [:]))
                let completed = try await harness.finalStatus("go-1")
                #expect(completed.state == .completed)
                #expect(completed.targets.total == 40)
                try await harness.stopRoles()
                #expect(try await harness.deliveries(eventId: "stop-1").isEmpty)
                #expect(try await harness.deliveries(eventId: "go-1").count == 40)
            })
    }
}
