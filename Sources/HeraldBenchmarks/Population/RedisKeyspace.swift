import Foundation
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
        try connection.deleteKeysBlocking(matching: prefix + ":*", count: 10_000)
    }
}

/// Redis's own background work after a big load: with AOF on (the embedded stack's Redis),
/// seeding a million registrations makes Redis fork a child that rewrites the whole dataset,
/// which competes with the next phase for the same cores. The bench waits for it to end so the
/// seeding's aftermath is not measured as part of the fan-out.
enum RedisBackgroundWork {
    /// Waits until Redis (every master of a cluster) reports no AOF rewrite and no RDB save in
    /// progress or scheduled, at most `limit`. Returns the seconds waited, or nil when Redis did not settle in time.
    static func waitUntilIdle(_ configuration: RedisConfiguration, limit: Duration = .seconds(180)) async throws -> Double? {
        let connection = RedisConnection(configuration: configuration)
        defer { connection.close() }
        let started = ContinuousClock.now
        while true {
            let replies = try await connection.sendToEveryMaster(.info("persistence"))
            if replies.allSatisfy({ busy($0.reply.string ?? "").isEmpty }) { return (ContinuousClock.now - started).seconds }
            if ContinuousClock.now - started > limit { return nil }
            try await Task.sleep(for: .milliseconds(250))
        }
    }

    /// The `INFO persistence` fields that say Redis is writing in the background, nonzero.
    static func busy(_ info: String) -> [String] {
        let watched: Set<String> = [
            "aof_rewrite_in_progress", "aof_rewrite_scheduled", "rdb_bgsave_in_progress",
        ]
        return info.split(whereSeparator: \.isNewline).compactMap { line in
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, watched.contains(String(parts[0])),
                parts[1].trimmingCharacters(in: .whitespaces) != "0"
            else { return nil }
            return String(parts[0])
        }
    }
}
