import HeraldBenchmarks
import HeraldRedis
import HeraldTestSupport
import Testing

/// `make bench` seeds a million registrations through a bulk loader; it is only honest if the
/// loader leaves Redis exactly as the indexer's Lua apply path does.
@Suite("benchmark seeding")
struct SeedIdentityTests {
    @Test("the bulk loader produces the same Redis keys and values as the Lua apply path")
    func bulkEqualsLua() async throws {
        let redis = try TestRedis()
        defer { redis.stop() }
        var check = SeedIdentityCheck(
            redis: RedisConfiguration(host: redis.host, port: redis.port), slotCount: 32,
            prefix: TestBroker.uniqueName("seed")
        )
        check.registrations = 1_000
        let outcome = try await check.run(seed: 42)
        #expect(outcome.registrations == 1_000)
        #expect(outcome.keys > 1_000)
        #expect(outcome.identical, "differences: \(outcome.differences.prefix(5))")
    }
}
