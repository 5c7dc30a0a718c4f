import Foundation
import HeraldDomain
import HeraldKafka
@testable import HeraldPipeline
import HeraldStreams
import HeraldTestSupport
import Synchronization
import Testing

@Suite("Urgency: breaking events first")
struct UrgencyTests {
    @Test("a breaking broadcast is planned as a broadcast's chunks on the express lane; normal and bulk ones on the bulk lane")
    func lanes() {
        var configuration = FanoutPlanner.Configuration()
        configuration.slotCount = 16
        configuration.bulkTaskCount = 4
        let planner = FanoutPlanner(configuration: configuration)
        for (urgency, expected) in [(Urgency.breaking, TaskLane.express), (.normal, .bulk), (.bulk, .bulk), (nil, .bulk)] {
            let plan = planner.plan(NotificationEvent(id: "b", urgency: urgency), eventId: "b", candidateSlots: nil, now: Date())
            guard case .tasks(let tasks, let lane) = plan else {
                Issue.record("expected tasks, got \(plan)")
                continue
            }
            #expect(lane == expected, "\(String(describing: urgency))")
            #expect(tasks.map(\.slots) == [0..<4, 4..<8, 8..<12, 12..<16])
        }
    }

    @Test("a bulk lane stands aside while breaking work runs, until it is done, out of its budget; narrow work only a moment")
    func gate() async throws {
        let gate = ExpressGate()
        gate.enter(breaking: true)
        let left = Mutex<Duration?>(nil)
        // A budget of an hour, not the lanes' 10 s: on a starved machine the check below can come
        // later than 10 s after the lane paused, and the lane would rightly have gone on.
        let given = Duration.seconds(3_600)
        let lane = Thread {
            var budget = given
            gate.yieldIfBusy(budget: &budget)
            left.withLock { $0 = budget }
        }
        lane.start()
        try await waitUntilTrue("the bulk lane is waiting for the breaking work") { gate.pagesPausedForBreaking == 1 }
        #expect(left.withLock { $0 } == nil, "the lane went on while breaking work ran")
        gate.leave(breaking: true)
        try await waitUntilTrue("the bulk lane goes on once the breaking work is done") { left.withLock { $0 } != nil }
        let budget = try #require(left.withLock { $0 })
        #expect(budget > .zero && budget < given)

        // A spent budget, or narrow work only: no waiting for breaking work.
        gate.enter(breaking: true)
        var spent = Duration.zero
        gate.yieldIfBusy(budget: &spent)
        gate.leave(breaking: true)
        gate.enter()
        var untouched = ExpressGate.breakingBudget
        gate.yieldIfBusy(budget: &untouched)
        gate.leave()
        #expect(untouched == ExpressGate.breakingBudget)
        #expect(gate.pagesPausedForBreaking == 1)
    }

}

@Suite("Urgency on the pipeline", .heavy, .serialized)
struct UrgencyPipelineTests {
    /// A bulk broadcast and a breaking one fanned out together: both complete with every
    /// delivery exactly once, the breaking one's tasks from the express topic.
    @Test func breakingAndBulkTogetherDeliverEachOnce() async throws {
        try await withPipelineHarness(
            slots: 16,
            configure: {
                $0.planner.bulkTaskCount = 8
                $0.planner.deliveriesPerTask = 100
            },
            body: { harness in
                try await harness.seed((0..<600).map { testRegistration("r\($0)", tags: ["World"]) })
                harness.startRoles()
                _ = try await harness.publish(
                    NotificationEvent(id: "digest-1", properties: ["News_English": "Weekly digest"], urgency: .bulk))
                _ = try await harness.publish(
                    NotificationEvent(id: "breaking-1", properties: ["News_English": "Breaking"], urgency: .breaking))
                for id in ["digest-1", "breaking-1"] {
                    let status = try await harness.finalStatus(id)
                    #expect(status.state == .completed && status.targets.total == 600, "\(status)")
                    let deliveries = try await harness.deliveries(eventId: id)
                    #expect(deliveries.count == 600 && Set(deliveries.map(\.registrationId)).count == 600)
                }
                let express = try await harness.records(harness.configuration.topics.expressTasks)
                let tasks = try express.map { try JSONDecoder().decode(FanoutTask.self, from: Data($0.value ?? [])) }
                #expect(!tasks.isEmpty && tasks.allSatisfy { $0.eventId == "breaking-1" }, "\(tasks.map(\.eventId))")
            })
    }
}
