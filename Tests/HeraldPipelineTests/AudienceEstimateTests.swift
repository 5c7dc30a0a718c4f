import Foundation
import HeraldDomain
@testable import HeraldPipeline
import HeraldRedis
import HeraldRegistry
import HeraldTestSupport
import Testing

/// The planner sizes a wide event's tasks by its estimated audience. Tags are rarely
/// independent, so the estimate is corrected by the expression's exact audience on the bitmaps
/// of a few slots.
@Suite("Audience estimate")
struct AudienceEstimateTests {
    /// `count` registrations: every one has `a` or `b` (never both); `c` is on exactly those
    /// with `a`; `d` on every fourth, independently of the others; `r` on three (too few in
    /// any slot for a bitmap).
    static func population(_ count: Int) -> [Registration] {
        (0..<count).map { number in
            var tags = [number % 2 == 0 ? "a" : "b"]
            if number % 2 == 0 { tags.append("c") }
            if (number / 2) % 4 == 0 { tags.append("d") }
            if number % 1_000 == 1 && number < 3_000 { tags.append("r") }
            return testRegistration("e\(number)", tags: tags)
        }
    }

    /// Runs `body` with a planner over `Self.population(registrations)` indexed in `slotCount`
    /// slots under `prefix` (its own on a shared Redis Cluster: a prefix records its slot count).
    static func withPlanner(
        registrations: Int, slotCount: Int, prefix: String,
        _ body: (EventPlanner, RedisConnection, PipelineConfiguration) async throws -> Void
    ) async throws {
        let redis = try TestRedis()
        defer { redis.stop() }
        var configuration = PipelineConfiguration()
        configuration.redis = try RedisConfiguration(url: redis.url)
        configuration.layout = SlotLayout(slotCount: slotCount, prefix: prefix)
        let pool = RedisConnectionPool(configuration: configuration.redis, size: 1)
        defer { pool.shutdown() }
        let index = RegistrationIndex(pool: pool, layout: configuration.layout)
        try await index.markBuilt()
        _ = try await index.apply(population(registrations).map { .registration(IndexedRegistration($0)) })
        let connection = RedisConnection(configuration: configuration.redis, logger: PipelineHarness.logger)
        defer { connection.close() }
        let planner = EventPlanner(
            configuration: configuration, redis: connection, taskPartitions: 1, expressPartitions: 1, logger: PipelineHarness.logger,
            metrics: PipelineMetrics())
        try await body(planner, connection, configuration)
    }

    @Test func estimatesFollowTheSampledBitmapsNotIndependence() async throws {
        try await Self.withPlanner(registrations: 4_000, slotCount: 16, prefix: "estimate") { planner, connection, configuration in

            func estimate(_ source: String?, probed: Bool = false) async throws -> Int {
                let expression = try source.map { try TagExpression.parse($0) }
                var counts: SlotTagCounts?
                if probed, let expression {
                    let tags = SlotCandidates.positiveTags(of: expression)
                    counts = try SlotTagCounts(
                        tags: tags,
                        replies: try await connection.pipeline(planner.probeCommands(tags: tags, layout: planner.configuration.layout))[...]
                    )
                }
                return try await planner.audienceEstimate(slots: nil, expression: expression, probed: counts)
            }
            // No expression: every registration.
            #expect(try await estimate(nil) == 4_000)
            // Independence would say a quarter (1,000); nobody has both.
            #expect(try await estimate("a && b") == 0)
            #expect(try await estimate("a && b", probed: true) == 0)
            // Independence would say 1,000; everyone with `a` has `c`: 2,000 (the sample's
            // correction carries a few percent of the slots' spread).
            for probed in [false, true] {
                let correlated = try await estimate("a && c", probed: probed)
                #expect(abs(correlated - 2_000) <= 150, "a && c estimated at \(correlated), probed: \(probed)")
            }
            // Independent tags need no correction: half of a quarter.
            let independent = try await estimate("a && d")
            #expect(abs(independent - 500) <= 100, "a && d estimated at \(independent)")
            // Negation is corrected the same way: everyone with `a` but without `c` is nobody.
            #expect(try await estimate("a && !c") == 0)
            // Every slot is sampled here, so the sample is exact; a rare tag has no bitmap to
            // sample and is sized by its sets: 1,500 with `a` times 3 with `r` over 4,000 at most.
            #expect(try await planner.sampledAudience(expression: TagExpression.parse("a && c")) == 2_000)
            #expect(try await planner.sampledAudience(expression: TagExpression.parse("a && r")) == nil)
            #expect(try await estimate("a && r") <= 3)
            // Some of the slots: sized by their sets and corrected on their bitmaps.
            let half = try await planner.audienceEstimate(slots: Array(0..<8), expression: TagExpression.parse("a && c"))
            let exact = Self.population(4_000).filter { configuration.layout.slot(of: $0.registrationId) < 8 && $0.tags.contains("c") }
                .count
            #expect(abs(half - exact) <= 100, "a && c in 8 slots estimated at \(half), is \(exact)")
        }
    }

    /// Over more slots than are sampled, the sample's exact audience is scaled to all slots.
    @Test func aSampleOfSlotsIsScaledToAllSlots() async throws {
        // 125 registrations a slot: `a` and `c` on about 62 of them, enough for bitmaps.
        try await Self.withPlanner(registrations: 8_000, slotCount: 64, prefix: "sampled") { planner, _, _ in
            let sampled = try #require(try await planner.sampledAudience(expression: TagExpression.parse("a && c")))
            #expect(abs(sampled - 4_000) <= 500, "a && c sampled at \(sampled)")
            #expect(try await planner.sampledAudience(expression: TagExpression.parse("a && b")) == 0)
            #expect(try await planner.audienceEstimate(slots: nil, expression: TagExpression.parse("a && c")) == sampled)
        }
    }
}

/// Tags the probe found in every slot are skipped by the next events' probes for a while.
@Suite("Common tags")
struct CommonTagsTests {
    /// Counts of `tags` over `slots` slots, as the probe replies: slot by slot, one per tag.
    static func counts(_ tags: [String], slots: Int, _ count: (String, Int) -> Int) throws -> SlotTagCounts {
        let replies = (0..<slots).flatMap { slot in tags.map { Result<RedisValue, RedisError>.success(.integer(count($0, slot))) } }
        return try SlotTagCounts(tags: tags, replies: replies[...])
    }

    @Test func onlyTagsInEverySlotAreRememberedAndForOneLifetime() throws {
        let tags = CommonTags()
        let start = ContinuousClock.now
        // `world` is in every slot; `rare` misses slot 2.
        tags.learn(
            try Self.counts(["world", "rare"], slots: 4) { tag, slot in tag == "rare" && slot == 2 ? 0 : 5 }, slotCount: 4, now: start)
        #expect(tags.contains("world", now: start + .seconds(1)))
        #expect(!tags.contains("rare", now: start + .seconds(1)))
        #expect(!tags.contains("world", now: start + CommonTags.lifetime))
        #expect(!tags.contains("world", now: start))
    }

    @Test func knownTagsArePresentInEverySlotOfTheCandidates() async throws {
        var configuration = PipelineConfiguration()
        configuration.layout = SlotLayout(slotCount: 4, prefix: "known")
        let connection = RedisConnection(configuration: try RedisConfiguration(url: "redis://127.0.0.1:1"), logger: PipelineHarness.logger)
        defer { connection.close() }
        let planner = EventPlanner(
            configuration: configuration, redis: connection, taskPartitions: 1, expressPartitions: 1, logger: PipelineHarness.logger,
            metrics: PipelineMetrics())
        let event = NotificationEvent(
            id: "k-1", audience: .expression(.and([.tag("world"), .tag("rare")]), source: "world && rare"), properties: [:])
        // `rare` only in slot 1: the known `world` does not widen an intersection.
        let rare = try Self.counts(["rare"], slots: 4) { _, slot in slot == 1 ? 1 : 0 }
        #expect(planner.candidateSlots(rare, known: ["world"], event: event) == [1])
        let either = NotificationEvent(
            id: "k-2", audience: .expression(.or([.tag("world"), .tag("rare")]), source: "world || rare"), properties: [:])
        #expect(planner.candidateSlots(rare, known: ["world"], event: either) == [0, 1, 2, 3])
        #expect(planner.candidateSlots(rare, event: either) == [1])
    }
}
