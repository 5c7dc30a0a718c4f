import HeraldRedis

/// Removes a run's keys afterwards (`SCAN MATCH <prefix>:*` and `UNLINK`), so a benchmark
/// can share a Redis with other work.
enum RedisKeyspace {
    /// `deleteAll` on a connection of its own, off the cooperative pool.
    @discardableResult
    static func deleteAll(prefix: String, redis: RedisConfiguration) async throws -> Int {
        try await BlockingThreads.run(name: "herald.bench.cleanup") {
            let connection = RedisConnection(configuration: redis)
            defer { connection.close() }
            return try deleteAll(prefix: prefix, connection: connection)
        }
    }

    @discardableResult
    static func deleteAll(prefix: String, connection: RedisConnection) throws -> Int {
        var cursor: UInt64 = 0
        var removed = 0
        repeat {
            guard let page = try connection.sendBlocking(.scan(cursor: cursor, match: prefix + ":*", count: 10_000)).scanPage else {
                throw BenchmarkError("SCAN did not answer with a page while removing \(prefix):*")
            }
            cursor = page.cursor
            let keys = page.elements.compactMap(\.bytes)
            if !keys.isEmpty {
                _ = try connection.sendBlocking(RedisCommand("UNLINK", arguments: keys))
                removed += keys.count
            }
        } while cursor != 0
        return removed
    }
}
