import Foundation
import HeraldDomain
import HeraldPipeline
import HeraldTestSupport
import Testing

/// A small deterministic generator so a failing population can be reproduced.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite("Recipient correctness", .heavy, .serialized)
struct RecipientCorrectnessTests {
    static let categories = ["World", "Politics", "Business", "Technology", "Science", "Sports"]

    static let expressions: [String?] = [
        nil,  // broadcast
        "World",
        "World || Politics",
        "(World || Politics) && !Sports",
        "!Sports",
        "!(World || Business) && Science",
        "((World && Science) || (Sports && !Politics)) && !Technology",
        "!World || Sports",
        "!(!(Business && (Science || !Sports)))",
        "$UserId:{user7}",
        "$UserId:{user7} || $UserId:{user1200}",
        "NoSuchTag",
        // Wide, with a tag that has no bitmap in the slots holding it: those slots take
        // another plan after the bitmaps were tried, the others take `bits`.
        "World && !$UserId:{user7}",
        "Science || $UserId:{user1200}",
    ]

    /// Narrow events (the `$UserId` rows) are delivered by the planner itself, or written to
    /// `herald.tasks.express` for an express lane: the audience must be the same either way.
    /// A broadcast reads each slot (about 190 registrations here) with one HGETALL of its view
    /// packs under the default `snapshotReadLimit`; with a limit of 0 it reads every slot one
    /// pack at a time with HMGET (and expressions use 50-member pages): the audience must be
    /// the same again. Each plan of the fan-out (`auto` chooses per slot; `scan` filters every
    /// slot's packs in the worker; `sets` resolves every slot in Redis; `bits` evaluates the
    /// tags' bitmaps wherever they all have one, here about 56 registrations per category and
    /// slot, and scans the other slots) must select the same audience, and the status says
    /// which plans ran.
    @Test(arguments: [
        (true, 16_384, FanoutPlanMode.auto), (false, 16_384, .scan), (true, 0, .sets), (true, 0, .scan), (false, 0, .bits),
    ])
    func deliveredRegistrationsEqualBruteForceEvaluation(
        plannerDeliversNarrowEvents: Bool, snapshotReadLimit: Int, plan: FanoutPlanMode
    ) async throws {
        try await withPipelineHarness(slots: 16) {
            $0.plannerDeliversNarrowEvents = plannerDeliversNarrowEvents
            $0.snapshotReadLimit = snapshotReadLimit
            $0.fanoutPlan = plan
            if snapshotReadLimit == 0 { $0.scanCount = 50 }
        } body: { harness in

            var random = SeededGenerator(state: 42)
            var population: [Registration] = []
            for number in 0..<3_000 {
                var tags = Self.categories.filter { _ in Double.random(in: 0..<1, using: &random) < 0.3 }
                tags.append("$UserId:{user\(number % 1_500)}")
                let platform: Platform = number % 3 == 0 ? .fcm : .apns
                let language: String? = number % 20 == 0 ? nil : ["English", "French", "Mandarin"][number % 3]
                population.append(testRegistration("r\(number)", platform: platform, tags: tags, language: language))
            }
            try await harness.seed(population)
            harness.startRoles()

            var expected: [String: Set<String>] = [:]
            for (position, source) in Self.expressions.enumerated() {
                let audience: Audience = try source.map { .expression(try TagExpression.parse($0), source: $0) } ?? .broadcast
                let event = NotificationEvent(
                    id: "rc-\(position)", audience: audience,
                    properties: ["News_English": "e", "News_French": "f", "News_Mandarin": "m"],
                    native: [.apns: #"{"aps":{"alert":"n"}}"#, .fcm: #"{"message":{"data":{"n":"1"}}}"#]
                )
                _ = try await harness.publish(event)
                expected["rc-\(position)"] = Set(population.filter { audience.matches(Set($0.tags)) }.map(\.registrationId))
            }

            var statuses: [String: StatusRecord] = [:]
            for eventId in expected.keys { statuses[eventId] = try await harness.finalStatus(eventId) }
            try await harness.stopRoles()

            let records = try await harness.records(harness.configuration.topics.deliveries)
            var delivered: [String: [String]] = [:]
            var partitions: [String: Set<Int32>] = [:]
            for message in records {
                let record = try DeliveryRecord.decode(message.value ?? [])
                delivered[record.eventId, default: []].append(record.registrationId)
                partitions[record.eventId, default: []].insert(message.partition)
                #expect(message.key == Array(record.registrationId.utf8))
            }
            // Narrow events write the express partition of the deliveries topic, whoever
            // delivers them; only express lanes read the express task topic.
            let express = Set(0..<Int32(harness.configuration.expressDeliveryPartitions))
            for eventId in ["rc-9", "rc-10"] {
                #expect(partitions[eventId]?.isSubset(of: express) == true, "\(eventId) on \(partitions[eventId] ?? [])")
            }
            #expect(partitions["rc-0"]?.isDisjoint(with: express) == true)
            // Each transaction writes one partition, and a slot belongs to one task (one
            // transaction): the broadcast's deliveries of one slot are all in one partition.
            var partitionsBySlot: [Int: Set<Int32>] = [:]
            for message in records {
                guard let record = try? DeliveryRecord.decode(message.value ?? []), record.eventId == "rc-0" else { continue }
                partitionsBySlot[harness.configuration.layout.slot(of: record.registrationId), default: []].insert(message.partition)
            }
            #expect(partitionsBySlot.count == 16)
            #expect(
                partitionsBySlot.values.allSatisfy { $0.count == 1 },
                "slots whose deliveries span partitions: \(partitionsBySlot.filter { $0.value.count > 1 }.keys.sorted())")
            // And that partition is the one of the task's partition of `herald.tasks`, which
            // the consumer group gives to one lane: lanes never share a deliveries partition.
            let bulkPartitions = harness.configuration.topics.deliveriesPartitions - Int32(express.count)
            var taskPartitionBySlot: [Int: Int32] = [:]
            for message in try await harness.records(harness.configuration.topics.tasks) {
                let task = try JSONDecoder().decode(FanoutTask.self, from: Data(message.value ?? []))
                guard task.eventId == "rc-0" else { continue }
                for slot in task.slots { taskPartitionBySlot[slot] = message.partition }
            }
            #expect(taskPartitionBySlot.count == 16)
            for (slot, partitions) in partitionsBySlot {
                let taskPartition = try #require(taskPartitionBySlot[slot], "slot \(slot) in no task")
                #expect(
                    partitions == [Int32(express.count) + taskPartition % bulkPartitions], "slot \(slot), task partition \(taskPartition)")
            }
            let expressTasks = try await harness.records(harness.configuration.topics.expressTasks)
            #expect(expressTasks.isEmpty == plannerDeliversNarrowEvents, "\(expressTasks.count) records on the express task topic")
            for (position, source) in Self.expressions.enumerated() {
                let eventId = "rc-\(position)"
                let ids = delivered[eventId] ?? []
                let want = expected[eventId] ?? []
                #expect(Set(ids) == want, "audience \(source ?? "broadcast"): \(Set(ids).symmetricDifference(want).count) ids differ")
                #expect(ids.count == Set(ids).count, "audience \(source ?? "broadcast") delivered some registration twice")
                #expect(statuses[eventId]?.state == .completed)
                #expect(statuses[eventId]?.targets.total == want.count)
            }
            // Which plans read the slots: a broadcast reads every slot as one; a forced plan
            // reads every slot of an expression; `auto` scans wide audiences and resolves
            // one user's in Redis.
            #expect(statuses["rc-0"]?.plans == ["broadcast": 16])
            for (position, source) in Self.expressions.enumerated() where source != nil && position != 11 {
                let plans = statuses["rc-\(position)"]?.plans ?? [:]
                #expect(plans.values.reduce(0, +) >= 1, "\(source!): \(plans)")
                switch plan {
                case .scan, .sets: #expect(Set(plans.keys) == [plan.rawValue], "\(source!): \(plans)")
                case .bits: #expect(Set(plans.keys).isSubset(of: ["bits", "scan"]), "\(source!): \(plans)")
                case .auto: break
                }
            }
            if plan == .bits {
                #expect(statuses["rc-3"]?.plans == ["bits": 16], "categories only: \(statuses["rc-3"]?.plans ?? [:])")
                #expect(statuses["rc-9"]?.plans?.keys.sorted() == ["scan"], "one user, no bitmap: \(statuses["rc-9"]?.plans ?? [:])")
            }
            if plan == .auto {
                #expect(statuses["rc-2"]?.plans == ["bits": 16], "World || Politics: \(statuses["rc-2"]?.plans ?? [:])")
                #expect(statuses["rc-9"]?.plans?.keys.sorted() == ["sets"], "one user: \(statuses["rc-9"]?.plans ?? [:])")
                // Bitmaps everywhere but where the user's registrations are.
                for eventId in ["rc-12", "rc-13"] {
                    let plans = statuses[eventId]?.plans ?? [:]
                    #expect(plans.keys.contains("bits") && plans.count == 2, "\(eventId): \(plans)")
                    #expect(plans.values.reduce(0, +) == 16, "\(eventId): \(plans)")
                }
            }
            // The population is large enough that the table exercises both lanes and an empty audience.
            #expect(expected["rc-9"]?.count == 2)
            #expect(expected["rc-11"]?.isEmpty == true)
            #expect(statuses["rc-11"]?.tasks.planned == 0)
        }
    }
}
