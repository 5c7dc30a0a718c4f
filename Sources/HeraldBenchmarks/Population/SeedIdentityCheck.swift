import HeraldRedis
import HeraldRegistry
import Logging

/// Proves that the bulk loader leaves Redis exactly as the indexer's Lua path does: seeds the
/// same small population both ways under two prefixes and compares `RegistrationIndex.digest`
/// key by key (names with the prefix stripped, types and contents).
public struct SeedIdentityCheck: Sendable {
    public struct Outcome: Sendable, Codable, Hashable {
        public var registrations: Int
        public var keys: Int
        public var identical: Bool
        /// A few keys that differ (prefix stripped), when not identical.
        public var differences: [String]
    }

    public let redis: RedisConfiguration
    public let slotCount: Int
    public let prefix: String
    public var registrations: Int = 3_000
    private let logger: Logger

    public init(redis: RedisConfiguration, slotCount: Int, prefix: String, logger: Logger = Logger(label: "herald.bench.seed")) {
        self.redis = redis
        self.slotCount = slotCount
        self.prefix = prefix
        self.logger = logger
    }

    public func run(seed: UInt64) async throws -> Outcome {
        let population = SeedPopulation(count: registrations, seed: seed, latencyUsers: 20)
        var fingerprints: [[String: String]] = []
        let pool = RedisConnectionPool(configuration: redis, size: 1, logger: logger)
        defer { pool.shutdown() }
        for path in BenchmarkOptions.SeedPath.allCases {
            let layout = SlotLayout(slotCount: slotCount, prefix: "\(prefix)-\(path.rawValue)")
            let seeder = PopulationSeeder(
                population: population, layout: layout, redis: redis, path: path, batchSize: 500, threads: 1, logger: logger)
            _ = try await seeder.seed()
            let digest = try await RegistrationIndex(pool: pool, layout: layout, logger: logger).digest()
            var stripped: [String: String] = [:]
            for (key, value) in digest.keys { stripped[String(key.dropFirst(layout.prefix.count))] = value }
            fingerprints.append(stripped)
            try await RedisKeyspace.deleteAll(prefix: layout.prefix, redis: redis)
        }
        let (lua, bulk) = (fingerprints[0], fingerprints[1])
        let differing = Set(lua.keys).union(bulk.keys).filter { lua[$0] != bulk[$0] }.sorted()
        return Outcome(
            registrations: registrations, keys: lua.count, identical: differing.isEmpty && !lua.isEmpty,
            differences: Array(differing.prefix(5)))
    }
}
