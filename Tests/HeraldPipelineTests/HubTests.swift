import Foundation
import HeraldDomain
import HeraldPipeline
import HeraldRedis
import HeraldRegistry
import HeraldTestSupport
import Testing

@Suite("Hubs: one deployment, several apps", .heavy, .serialized)
struct HubTests {
    static let sports = HubName("sports")!

    /// Two hubs with the same registration id and the same event id: each event reaches its
    /// own hub's devices only, with its own status, and every record names its hub.
    @Test func eachHubsEventReachesOnlyThatHubsDevices() async throws {
        try await withPipelineHarness(slots: 8) { harness in
            func inSports(_ registration: Registration) -> Registration {
                var registration = registration
                registration.hub = Self.sports
                return registration
            }
            try await harness.seed([
                testRegistration("r1", tags: ["World"]),
                testRegistration("r2", tags: ["World"]),
                testRegistration("only-default", tags: ["Sports"]),
                inSports(testRegistration("r1", platform: .fcm, tags: ["World"])),
                inSports(testRegistration("s1", tags: ["World"])),
                inSports(testRegistration("s2", tags: ["World", "Sports"])),
            ])
            #expect(try await harness.index.hubs() == [.default, Self.sports])
            try await harness.createHub(Self.sports)
            guard case .live(let document) = try await harness.index.hub(Self.sports).storedRegistration(id: "r1") else {
                Issue.record("sports' r1 is not in the sports hub's keys")
                return
            }
            #expect(try JSONDecoder().decode(Registration.self, from: Data(document)).platform == .fcm)
            harness.startRoles()

            let world = NotificationEvent(
                id: "same", audience: .expression(.tag("World"), source: "World"), properties: ["News_English": "Summit"])
            var sportsWorld = world
            sportsWorld.hub = Self.sports
            sportsWorld.properties = ["News_English": "Final whistle"]
            var sportsOnly = NotificationEvent(id: "goal", audience: .expression(.tag("Sports"), source: "Sports"))
            sportsOnly.hub = Self.sports
            sportsOnly.properties = ["News_English": "Goal"]
            _ = try await harness.publish(world)
            _ = try await harness.publish(sportsWorld)
            _ = try await harness.publish(sportsOnly)
            // A hub nobody created: its event is a dead letter that says so.
            var nowhere = sportsOnly
            nowhere.hub = HubName("nowhere")!
            _ = try await harness.publish(nowhere)

            let defaultStatus = try await harness.finalStatus("same")
            let sportsStatus = try await harness.finalStatus("same", hub: Self.sports)
            let goalStatus = try await harness.finalStatus("goal", hub: Self.sports)
            let reasons = try await waitWhileProgressing("the dead letter of the nowhere hub's event") {
                () async throws -> ProgressCheck<Int, [JSONValue?]> in
                let letters = try await harness.records(harness.configuration.topics.eventsDeadLetters)
                guard !letters.isEmpty else { return .waiting(0) }
                return .done(try letters.compactMap { $0.value }.map { try JSONValue.parse($0)["reason"] })
            }
            try await harness.stopRoles()

            #expect(defaultStatus.state == .completed && defaultStatus.hub == .default)
            #expect(defaultStatus.targets.total == 2)
            #expect(sportsStatus.state == .completed && sportsStatus.hub == Self.sports)
            #expect(sportsStatus.targets.total == 3)
            #expect(goalStatus.targets.total == 1)
            let reader = StatusReader(pool: harness.pool, layout: harness.configuration.layout)
            #expect(try await reader.status(eventId: "goal") == nil, "the default hub has no event goal")

            let defaultDeliveries = try await harness.deliveries(eventId: "same")
            #expect(Set(defaultDeliveries.map(\.registrationId)) == ["r1", "r2"])
            #expect(defaultDeliveries.allSatisfy { $0.payload.contains("Summit") && $0.hub == .default })
            let sportsDeliveries = try await harness.deliveries(eventId: "same", hub: Self.sports)
            #expect(Set(sportsDeliveries.map(\.registrationId)) == ["r1", "s1", "s2"])
            #expect(sportsDeliveries.allSatisfy { $0.payload.contains("Final whistle") })
            #expect(sportsDeliveries.first { $0.registrationId == "r1" }?.platform == .fcm, "sports' own r1")
            #expect(try await harness.deliveries(eventId: "goal", hub: Self.sports).map(\.registrationId) == ["s2"])
            #expect(reasons == [.string("unknown_hub")])
        }
    }

    /// A hub's `maxPayloadBytes` bounds its renditions: one over it is skipped
    /// `payload_too_large`, a test send's too; the default hub keeps the platforms' limits.
    @Test func aHubsPayloadLimitSkipsLargerRenditions() async throws {
        try await withPipelineHarness(slots: 8) { harness in
            var short = testRegistration("short", tags: ["World"])
            short.hub = Self.sports
            short.template = RegistrationTemplate(name: "short", body: #"{"aps":{"alert":"$(headline)"}}"#)
            var long = testRegistration("long", tags: ["World"])
            long.hub = Self.sports
            long.template = RegistrationTemplate(name: "long", body: #"{"aps":{"alert":"$(headline)"},"body":"$(body)"}"#)
            var elsewhere = long
            elsewhere.hub = .default
            try await harness.seed([short, long, elsewhere])
            try await harness.createHub(Self.sports, limits: HubLimits(maxPayloadBytes: 128))
            harness.startRoles()
            let properties = ["headline": "Goal", "body": String(repeating: "b", count: 200)]
            var event = NotificationEvent(id: "big", audience: .expression(.tag("World"), source: "World"), properties: properties)
            event.hub = Self.sports
            _ = try await harness.publish(event)
            var plain = event
            plain.hub = .default
            _ = try await harness.publish(plain)
            var test = event
            test.id = "big-test"
            test.testRecipients = [.device("long"), .device("short")]
            let receipt = try await harness.publishReceipt(test)
            let testId = DerivedSend.test.eventId(of: "big-test", partition: receipt.partition, offset: receipt.offset)

            let bounded = try await harness.finalStatus("big", hub: Self.sports)
            #expect(bounded.targets.total == 1 && bounded.skippedReasons?["payload_too_large"] == 1, "\(bounded)")
            #expect(try await harness.deliveries(eventId: "big", hub: Self.sports).map(\.registrationId) == ["short"])
            let unbounded = try await harness.finalStatus("big")
            #expect(unbounded.targets.total == 1 && unbounded.skippedReasons == nil, "\(unbounded)")
            let tested = try await harness.finalStatus(testId, hub: Self.sports)
            #expect(tested.targets.total == 1 && tested.skippedReasons?["payload_too_large"] == 1, "\(tested)")
            try await harness.stopRoles()
        }
    }

    /// A hub's breaking alert never queues behind another hub's broadcast: with no bulk lane
    /// running, the default hub's broadcast stays planned while the sports hub's breaking
    /// alert completes on the express lane; a bulk lane started afterwards completes the
    /// broadcast, and each event reaches its own hub's devices exactly once, each on its lane.
    /// (How long the alert takes while the other hub broadcasts is the bench's row.)
    @Test func aBreakingAlertDoesNotQueueBehindAnotherHubsBroadcast() async throws {
        try await withPipelineHarness(
            slots: 16,
            configure: { $0.bulkLanes = 0 },
            body: { harness in
                let news = (0..<300).map { testRegistration("n\($0)", tags: ["World"]) }
                let fans = (0..<80).map { index -> Registration in
                    var registration = testRegistration("s\(index)", tags: ["Football"])
                    registration.hub = Self.sports
                    return registration
                }
                try await harness.seed(news + fans)
                try await harness.createHub(Self.sports)
                harness.startRoles()

                _ = try await harness.publish(NotificationEvent(id: "digest", properties: ["News_English": "Digest"]))
                let reader = StatusReader(pool: harness.pool, layout: harness.configuration.layout)
                let planned = try await waitWhileProgressing("the digest being planned") {
                    () async throws -> ProgressCheck<Int, StatusRecord> in
                    if let status = try await reader.status(eventId: "digest") { return .done(status) }
                    return .waiting(0)
                }
                #expect(!planned.state.isTerminal, "\(planned)")
                // The deployment's registration writers are told while a breaking alert runs; once
                // its tasks are done the signal ends a moment later, not a whole signal later.
                func signalEnds() async throws -> [Int64] {
                    let key = harness.configuration.layout.breakingKey
                    let values = try await harness.pool.withConnection { try await $0.send(RedisCommand("HVALS", key)) }.array ?? []
                    return values.compactMap { $0.string.flatMap { Int64($0) } }
                }
                #expect(harness.context.express.breakingSignalsSent == 0)
                #expect(try await signalEnds().isEmpty)
                var goal = NotificationEvent(id: "goal", properties: ["News_English": "Goal"], urgency: .breaking)
                goal.hub = Self.sports
                _ = try await harness.publish(goal)
                let goalStatus = try await harness.finalStatus("goal", hub: Self.sports)
                #expect(harness.context.express.breakingSignalsSent >= 1)
                let ends = try await signalEnds()
                let latest = Int64(Date().timeIntervalSince1970 * 1_000) + Int64(harness.configuration.breakingSignalLingerMilliseconds)
                #expect(!ends.isEmpty && ends.allSatisfy { $0 <= latest }, "\(ends) against \(latest)")
                // The planner raised it first, as it read the alert, before any lane ran it.
                let signalled =
                    try await harness.pool.withConnection {
                        try await $0.send(.hgetall(harness.configuration.layout.breakingKey))
                    }.fieldValuePairs?.keys.sorted() ?? []
                #expect(signalled.contains(harness.configuration.instanceId + "/planner"), "\(signalled)")
                #expect(goalStatus.state == .completed && goalStatus.targets.total == 80, "\(goalStatus)")
                let waiting = try await reader.status(eventId: "digest")
                #expect(
                    waiting.map { !$0.state.isTerminal } == true, "the digest completed without a bulk lane: \(String(describing: waiting))"
                )

                harness.startFanout(lanes: (bulk: 1, express: 0))
                let digestStatus = try await harness.finalStatus("digest")
                try await harness.stopRoles()
                #expect(digestStatus.state == .completed && digestStatus.targets.total == 300, "\(digestStatus)")
                let digest = try await harness.deliveries(eventId: "digest")
                #expect(digest.count == 300 && Set(digest.map(\.registrationId)) == Set(news.map(\.registrationId)))
                let goals = try await harness.deliveries(eventId: "goal", hub: Self.sports)
                #expect(goals.count == 80 && Set(goals.map(\.registrationId)) == Set(fans.map(\.registrationId)))
                #expect(goals.allSatisfy { $0.hub == Self.sports && $0.payload.contains("Goal") })
                func taskEvents(_ topic: String) async throws -> Set<String> {
                    let records = try await harness.records(topic)
                    return Set(try records.map { try JSONDecoder().decode(FanoutTask.self, from: Data($0.value ?? [])).eventId })
                }
                #expect(try await taskEvents(harness.configuration.topics.expressTasks) == ["goal"])
                #expect(try await taskEvents(harness.configuration.topics.tasks) == ["digest"])
            })
    }
}
