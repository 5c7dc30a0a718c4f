import Foundation
import HeraldDomain
@testable import HeraldPipeline
import Testing
import HeraldStreams

@Suite("Planning")
struct PlanningTests {
    @Test(arguments: [(256, 24), (256, 1), (10, 3), (5, 8), (1, 4)])
    func slotRangesCoverEverySlotOnceAndDifferByAtMostOne(slots: Int, parts: Int) {
        let ranges = SlotRange.split(slotCount: slots, into: parts)
        #expect(ranges.count == min(slots, parts))
        #expect(ranges.flatMap { Array($0) } == Array(0..<slots))
        let sizes = ranges.map(\.count)
        #expect(sizes.max()! - sizes.min()! <= 1)
    }

    @Test(arguments: [
        ("a", ["a"], true),
        ("a", ["b"], false),
        ("a && b", ["a"], false),
        ("a && b", ["a", "b"], true),
        ("a || b", ["b"], true),
        ("a && !b", ["a", "b"], true),  // the set of b may not cover a's members
        ("(a || b) && !(c && d)", ["c", "d"], false),
        ("$UserId:{alice}", ["$UserId:{alice}"], true),
    ])
    func slotCandidateTest(expression: String, present: [String], expected: Bool) throws {
        let parsed = try TagExpression.parse(expression)
        #expect(SlotCandidates.mayMatch(parsed, present: Set(present).contains) == expected)
    }

    @Test(arguments: [
        ("World", false),
        ("!Sports", false),
        ("World || !World", false),  // all - (World - World): still computed in Redis
        ("$UserId:{alice}", false),
    ])
    func onlyBroadcastsReadTheWholeViewsHash(expression: String, everything: Bool) throws {
        #expect(TaskExecutor.selectsEverything(nil))
        #expect(TaskExecutor.selectsEverything(TagSetPlan(steps: [], result: .all, temporaryCount: 0)))
        #expect(TaskExecutor.selectsEverything(try TagExpression.parse(expression).setPlan()) == everything)
    }

    @Test(arguments: ["!Sports", "!a || b", "a || !b"])
    func expressionsMatchingWithoutTagsAreNotProbed(expression: String) throws {
        let event = NotificationEvent(id: "e", audience: .expression(try TagExpression.parse(expression), source: expression))
        #expect(FanoutPlanner().tagsToProbe(event) == nil)
        #expect(FanoutPlanner().tagsToProbe(NotificationEvent(id: "b")) == nil)
    }

    @Test func positiveTagsSkipNegatedOnes() throws {
        #expect(SlotCandidates.positiveTags(of: try TagExpression.parse("(a || b) && !c && (a || d)")) == ["a", "b", "d"])
    }

    @Test func expiredEventGetsNoTasks() {
        let now = Date()
        let event = NotificationEvent(id: "e", expiresAt: now.addingTimeInterval(-1))
        #expect(FanoutPlanner().plan(event, eventId: "e", candidateSlots: nil, now: now) == .expired)
    }

    @Test func narrowEventBecomesExpressTasksOverRunsOfCandidateSlots() throws {
        var configuration = FanoutPlanner.Configuration()
        configuration.slotCount = 256
        configuration.narrowSlotLimit = 8
        let planner = FanoutPlanner(configuration: configuration)
        let event = NotificationEvent(id: "e", audience: .expression(.tag("$UserId:{alice}"), source: "$UserId:{alice}"))
        let plan = planner.plan(event, eventId: "e", candidateSlots: [3, 4, 200], now: Date())
        guard case .tasks(let tasks, let lane) = plan else {
            Issue.record("expected tasks, got \(plan)")
            return
        }
        #expect(lane == .express)
        #expect(tasks.map(\.slots) == [3..<5, 200..<201])
        #expect(tasks.map(\.taskIndex) == [0, 1])
        #expect(tasks.allSatisfy { $0.taskCount == 2 && $0.eventId == "e" })
    }

    @Test func wideEventBecomesBulkChunksWithoutChunksThatHaveNoCandidate() {
        var configuration = FanoutPlanner.Configuration()
        configuration.slotCount = 16
        configuration.bulkTaskCount = 4
        configuration.narrowSlotLimit = 2
        let planner = FanoutPlanner(configuration: configuration)
        let broadcast = planner.plan(NotificationEvent(id: "b"), eventId: "b", candidateSlots: nil, now: Date())
        #expect(broadcast.tasks.map(\.slots) == [0..<4, 4..<8, 8..<12, 12..<16])
        guard case .tasks(_, let lane) = broadcast else { return }
        #expect(lane == .bulk)

        let partial = planner.plan(NotificationEvent(id: "p"), eventId: "p", candidateSlots: [1, 2, 13], now: Date())
        #expect(partial.tasks.map(\.slots) == [0..<4, 12..<16])
        #expect(partial.tasks.map(\.taskCount) == [2, 2])

        let nobody = planner.plan(NotificationEvent(id: "n"), eventId: "n", candidateSlots: [], now: Date())
        #expect(nobody.tasks.isEmpty)
    }

    /// A big audience gets more, smaller tasks (each one transaction), never fewer than
    /// `bulkTaskCount` and never more than the slots. An expression gets tasks of about
    /// `deliveriesPerTask` however few, their count rounded up to an even one (two lanes), but
    /// never tasks aiming at fewer than half of `deliveriesPerTask`.
    @Test(arguments: [
        (nil as Int?, 4, 4), (0, 4, 1), (1_000, 4, 1), (3_000, 4, 1), (16_000, 4, 2), (24_000, 4, 2), (40_000, 4, 4),
        (70_000, 5, 6), (80_001, 6, 6), (160_000, 10, 10), (10_000_000, 16, 16),
    ])
    func bulkTasksGrowWithTheAudience(estimate: Int?, expected: Int, forExpression: Int) {
        var configuration = FanoutPlanner.Configuration()
        configuration.slotCount = 16
        configuration.bulkTaskCount = 4
        configuration.deliveriesPerTask = 16_000
        let planner = FanoutPlanner(configuration: configuration)
        #expect(planner.bulkTaskCount(audienceEstimate: estimate) == expected)
        #expect(planner.bulkTaskCount(audienceEstimate: estimate, isExpression: true) == forExpression)
        let plan = planner.plan(NotificationEvent(id: "b"), eventId: "b", candidateSlots: nil, audienceEstimate: estimate, now: Date())
        #expect(plan.tasks.count == expected)
        #expect(plan.tasks.flatMap { Array($0.slots) } == Array(0..<16), "every slot in exactly one task")
    }

    /// The expression's count follows the lanes a worker has: three lanes, a multiple of three.
    @Test func expressionTasksFollowTheLanes() {
        var configuration = FanoutPlanner.Configuration()
        configuration.slotCount = 256
        configuration.deliveriesPerTask = 32_000
        configuration.taskCountMultiple = 3
        let planner = FanoutPlanner(configuration: configuration)
        #expect(planner.bulkTaskCount(audienceEstimate: 416_575, isExpression: true) == 15)
        #expect(planner.bulkTaskCount(audienceEstimate: 40_000, isExpression: true) == 3)
        #expect(planner.bulkTaskCount(audienceEstimate: 20_000, isExpression: true) == 2, "no task under 16,000")
        #expect(planner.bulkTaskCount(audienceEstimate: 10_000_000, isExpression: true) == 256, "one per slot at most")
    }

    /// Whatever the event's starting partition, a consumer group that gives its members
    /// contiguous blocks of the task topic (the range assignor; partitions a multiple of the
    /// members) hands an event's tasks out evenly: no member gets two more than another.
    @Test(arguments: [(8, 2), (8, 4), (10, 2), (4, 2), (12, 3), (6, 6)])
    func tasksSpreadOverContiguousBlocksOfPartitions(partitions: Int, members: Int) {
        for taskCount in 1...(2 * partitions + 1) {
            for start in 0..<partitions {
                var perMember = [Int](repeating: 0, count: members)
                var perPartition = [Int](repeating: 0, count: partitions)
                for index in 0..<taskCount {
                    let partition = Int(
                        FanoutPlanner.partition(ofTask: index, taskCount: taskCount, start: Int32(start), partitions: Int32(partitions)))
                    perPartition[partition] += 1
                    perMember[partition / (partitions / members)] += 1
                }
                let spread = perMember.max()! - perMember.min()!
                #expect(spread <= 1, "\(taskCount) tasks from \(start) over \(partitions): \(perMember)")
                #expect(perPartition.max()! - perPartition.min()! <= 1, "\(taskCount) tasks from \(start): \(perPartition)")
            }
        }
    }

    @Test func nextOffsetsTakeTheLastRecordPerPartition() {
        let batch = [
            KafkaMessageFixture.make("t", 0, 5), KafkaMessageFixture.make("t", 1, 9),
            KafkaMessageFixture.make("t", 0, 7), KafkaMessageFixture.make("u", 0, 1),
        ]
        let offsets = TransactionalLoop.nextOffsets(batch).map(\.description)
        #expect(offsets == ["t[0]@8", "t[1]@10", "u[0]@2"])
    }

    @Test func assignedEventIdsAreValidIdentifiers() {
        let ids = (0..<100).map { _ in EventPublisher.newEventId() }
        #expect(Set(ids).count == 100)
        for id in ids { #expect(IdentifierRules.eventIdProblem(id) == nil) }
    }
}
