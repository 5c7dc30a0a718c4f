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
    /// 4,000 registrations over 16 slots: every one has `a` or `b` (never both); `c` is on
    /// exactly those with `a`; `d` on every fourth, independently of the others.
    static let population = (0..<4_000).map { number in
        var tags = [number % 2 == 0 ? "a" : "b"]
        if number % 2 == 0 { tags.append("c") }
        if (number / 2) % 4 == 0 { tags.append("d") }
        return testRegistration("e\(number)", tags: tags)
    }

    @Test func estimatesFollowTheSampledBitmapsNotIndependence() async throws {
        let redis = try TestRedis()
        defer { redis.stop() }
        var configuration = PipelineConfiguration()
        configuration.redis = try RedisConfiguration(url: redis.url)
        configuration.layout = SlotLayout(slotCount: 16, prefix: "estimate")
        let pool = RedisConnectionPool(configuration: configuration.redis, size: 1)
        defer { pool.shutdown() }
        let index = RegistrationIndex(pool: pool, layout: configuration.layout)
        try await index.markBuilt()
        _ = try await index.apply(Self.population.map { .registration(IndexedRegistration($0)) })
        let connection = RedisConnection(configuration: configuration.redis, logger: PipelineHarness.logger)
        defer { connection.close() }
        let planner = EventPlanner(
            configuration: configuration, redis: connection, taskPartitions: 1, expressPartitions: 1, logger: PipelineHarness.logger)

        func estimate(_ source: String?, probed: Bool = false) async throws -> Int {
            let expression = try source.map { try TagExpression.parse($0) }
            var counts: SlotTagCounts?
            if probed, let expression {
                let tags = SlotCandidates.positiveTags(of: expression)
                counts = try SlotTagCounts(tags: tags, replies: try await connection.pipeline(planner.probeCommands(tags: tags))[...])
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
    }
}
