import HeraldRedis
import HeraldTestSupport
import Testing

// Serialized: the tests flush the server's script cache and count its NOSCRIPT errors, which
// would race when they share one server (HERALD_TEST_REDIS_URL).
@Suite("Lua scripts", .serialized)
struct RedisScriptTests {
    // Moves a member between two sets and reports the new size of the target, like the
    // indexer's tag move.
    static let move = RedisScript(
        """
        redis.call('SREM', KEYS[1], ARGV[1])
        redis.call('SADD', KEYS[2], ARGV[1])
        return redis.call('SCARD', KEYS[2])
        """)

    @Test("the local SHA1 is the name Redis gives the script")
    func localSHA1MatchesRedis() async throws {
        let redis = try TestRedis()
        let connection = try await redis.connect()
        #expect(try await connection.send(.scriptLoad(Self.move.source)).string == Self.move.sha1)
    }

    @Test(
        "SHA1 of known inputs",
        arguments: [
            ("", "da39a3ee5e6b4b0d3255bfef95601890afd80709"),
            ("abc", "a9993e364706816aba3e25717850c26c9cd0d89d"),
            ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "84983e441c3bd26ebaae4aa1f95129e5e54670f1"),
            (String(repeating: "a", count: 1000), "291e9a6c66994949b57ba5e650361e98fc36b1ba"),
        ])
    func knownDigests(input: String, expected: String) {
        #expect(RedisScript(input).sha1 == expected)
    }

    @Test("EVALSHA after SCRIPT FLUSH falls back to loading the script")
    func evalshaAfterFlush() async throws {
        let redis = try TestRedis()
        let connection = try await redis.connect()
        let prefix = uniquePrefix()
        _ = try await connection.send(.sadd(prefix + "from", ["r1"]))
        _ = try await connection.send(.scriptFlush)
        #expect(try await connection.send(.scriptExists([Self.move.sha1])) == .array([.integer(0)]))
        let noscriptBefore = try await noscriptErrorCount(connection)

        let size = try await connection.evalScript(Self.move, keys: [prefix + "from", prefix + "to"], arguments: ["r1"])

        #expect(size == .integer(1))
        // The path taken: EVALSHA was answered NOSCRIPT once, then the script got loaded.
        #expect(try await noscriptErrorCount(connection) == noscriptBefore + 1)
        #expect(connection.statistics.scriptReloads == 1)
        #expect(try await connection.send(.scriptExists([Self.move.sha1])) == .array([.integer(1)]))
        #expect(try await connection.send(.smembers(prefix + "to")) == .array([.bulkString(Array("r1".utf8))]))

        // Loaded now: the next call is a plain EVALSHA.
        _ = try await connection.evalScript(Self.move, keys: [prefix + "to", prefix + "from"], arguments: ["r1"])
        #expect(connection.statistics.scriptReloads == 1)
        #expect(try await noscriptErrorCount(connection) == noscriptBefore + 1)
    }

    @Test("scripts in a pipeline survive a SCRIPT FLUSH between pipelines")
    func scriptsInPipeline() async throws {
        let redis = try TestRedis()
        let connection = try await redis.connect()
        let prefix = uniquePrefix()
        let keys = [prefix + "a", prefix + "b"]

        // First pipeline: the script is not known on this connection yet, so it is loaded
        // ahead of the commands in the same round trip.
        let first = try await connection.pipeline([
            .sadd(keys[0], ["m1", "m2"]),
            .evalScript(Self.move, keys: keys, arguments: ["m1"]),
            .evalScript(Self.move, keys: keys, arguments: ["m2"]),
        ])
        #expect(try first.map { try $0.get() } == [.integer(2), .integer(1), .integer(2)])

        // Flushed behind the connection's back: EVALSHA answers NOSCRIPT and is repaired.
        _ = try await connection.send(.scriptFlush)
        let second = try await connection.pipeline([
            .evalScript(Self.move, keys: [keys[1], keys[0]], arguments: ["m1"]),
            .scard(keys[1]),
        ])
        // The repaired EVALSHA ran after the rest of the pipeline (documented), so SCARD still
        // saw both members.
        #expect(try second.map { try $0.get() } == [.integer(1), .integer(2)])
        #expect(try await connection.send(.scard(keys[1])) == .integer(1))
        #expect(connection.statistics.scriptReloads == 1)
    }

    private func noscriptErrorCount(_ connection: RedisConnection) async throws -> Int {
        let info = try await connection.send(.info("errorstats")).string ?? ""
        // errorstat_NOSCRIPT:count=3
        for line in info.split(whereSeparator: \.isNewline) where line.hasPrefix("errorstat_NOSCRIPT:") {
            if let count = line.split(separator: "=").last.flatMap({ Int($0) }) { return count }
        }
        return 0
    }
}
