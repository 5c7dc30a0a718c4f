@testable import HeraldBenchmarks
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
            redis: try RedisConfiguration(url: redis.url), slotCount: 32,
            prefix: TestBroker.uniqueName("seed")
        )
        check.registrations = 1_000
        let outcome = try await check.run(seed: 42)
        #expect(outcome.registrations == 1_000)
        #expect(outcome.keys > 1_000)
        #expect(outcome.identical, "differences: \(outcome.differences.prefix(5))")
    }
}

@Suite("Redis per-master usage")
struct RedisNodeUsageTests {
    @Test("INFO commandstats and INFO cpu lines become commands, most time first, and CPU seconds")
    func parsing() {
        let stats =
            "# Commandstats\r\ncmdstat_hgetall:calls=2000,usec=9000,usec_per_call=4.50,rejected_calls=0,failed_calls=0\r\n"
            + "cmdstat_scard:calls=32,usec=40,usec_per_call=1.25,rejected_calls=0,failed_calls=0\r\ncmdstat_broken:calls=x\r\n"
        let commands = RedisNodeUsage.commands(info: stats)
        #expect(commands.map(\.name) == ["hgetall", "scard"])
        #expect(commands.first?.calls == 2_000 && commands.first?.microseconds == 9_000)
        #expect(RedisNodeUsage.cpuSeconds(info: "# CPU\r\nused_cpu_sys:1.5\r\nused_cpu_user:2.25\r\n") == 3.75)
        #expect(RedisNodeUsage.cpuSeconds(info: "# CPU\r\nused_cpu_sys:1.5\r\n") == nil)
    }

    @Test("the meter counts exactly the commands run between its start and its finish")
    func meter() async throws {
        let redis = try TestRedis()
        defer { redis.stop() }
        let configuration = try RedisConfiguration(url: redis.url)
        let connection = RedisConnection(configuration: configuration)
        defer { connection.close() }
        let prefix = TestBroker.uniqueName("usage")
        _ = try await connection.send(.set("\(prefix):before", "1"))
        let meter = RedisNodeUsage.Meter(redis: configuration)
        let started = try await meter.start()
        _ = try await connection.pipeline((0..<250).map { .set("\(prefix):\($0)", "v") })
        let usage = try await meter.finish(started)
        #expect(usage.count == 1)
        #expect(usage.first?.commands.first { $0.name == "set" }?.calls == 250)
        #expect((usage.first?.cpuSeconds ?? -1) >= 0)
        _ = try await connection.deleteKeys(matching: "\(prefix):*")
    }
}

@Suite("Redis background work")
struct RedisBackgroundWorkTests {
    @Test("only nonzero rewrite and save fields count as busy")
    func busyFields() {
        let idle = "# Persistence\r\naof_enabled:1\r\naof_rewrite_in_progress:0\r\naof_rewrite_scheduled:0\r\nrdb_bgsave_in_progress:0\r\n"
        #expect(RedisBackgroundWork.busy(idle).isEmpty)
        let rewriting = idle.replacingOccurrences(of: "aof_rewrite_in_progress:0", with: "aof_rewrite_in_progress:1")
        #expect(RedisBackgroundWork.busy(rewriting) == ["aof_rewrite_in_progress"])
        let saving = idle.replacingOccurrences(of: "rdb_bgsave_in_progress:0", with: "rdb_bgsave_in_progress:1")
            .replacingOccurrences(of: "aof_rewrite_scheduled:0", with: "aof_rewrite_scheduled:1")
        #expect(Set(RedisBackgroundWork.busy(saving)) == ["aof_rewrite_scheduled", "rdb_bgsave_in_progress"])
    }

    /// The wait ends within its limit on a real Redis (possibly the shared test Redis, whose
    /// AOF other tests may be rewriting), and that Redis names the fields the wait watches.
    @Test("the wait ends on a real Redis, which reports the fields it watches")
    func waitEnds() async throws {
        let redis = try TestRedis()
        defer { redis.stop() }
        let configuration = try RedisConfiguration(url: redis.url)
        let waited = try await RedisBackgroundWork.waitUntilIdle(configuration, limit: .seconds(60))
        #expect(waited != nil)
        let connection = RedisConnection(configuration: configuration)
        defer { connection.close() }
        let info = try await connection.send(.info("persistence")).string ?? ""
        for field in ["aof_rewrite_in_progress:", "aof_rewrite_scheduled:", "rdb_bgsave_in_progress:"] {
            #expect(info.contains(field), "INFO persistence has no \(field)")
        }
    }
}

@Suite("benchmark population")
struct SeedPopulationTests {
    @Test("the region tag selects the audiences its documentation names")
    func regionShares() throws {
        let population = SeedPopulation(count: 200_000, seed: 7)
        var region = 0
        var regionWithoutSports = 0
        for index in 0..<population.count {
            let profile = population.profile(at: index)
            #expect(profile.has(SeedPopulation.regionTag) == profile.tags.contains(SeedPopulation.regionTag))
            guard profile.region else { continue }
            region += 1
            if !profile.has("Sports") { regionWithoutSports += 1 }
        }
        #expect((2_700...3_300).contains(region), "\(region) of 200,000 in the region, not about 1.5 %")
        #expect((1_700...2_300).contains(regionWithoutSports), "\(regionWithoutSports) of 200,000 for the 1 % row")

        // The bench's events carry native payloads too: everyone in the audience receives one.
        let event = try BenchmarkEvents.expression(id: "region", source: "Region_Nordic && !Sports")
        #expect(population.expectedDeliveries(for: [event]) == [regionWithoutSports])
    }
}
