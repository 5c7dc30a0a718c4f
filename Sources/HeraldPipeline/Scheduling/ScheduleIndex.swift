import Foundation
import HeraldDomain
import HeraldRedis
import HeraldRegistry

/// The pending schedules as the index holds them, for `GET /v1/notifications?state=scheduled`.
public struct ScheduleReader: Sendable {
    private let pool: RedisConnectionPool
    private let layout: SlotLayout
    private let partitions: Int32

    /// `partitions`: of `herald.scheduled` (`HeraldTopics.scheduledPartitions`).
    public init(pool: RedisConnectionPool, layout: SlotLayout, partitions: Int32) {
        self.pool = pool
        self.layout = layout
        self.partitions = partitions
    }

    /// Every schedule with a release pending, next release first.
    public func pending() async throws -> [ScheduledEvent] {
        try await pool.withConnection { connection in
            try await ScheduleIndex(redis: connection, layout: layout).pending(partitions: 0..<partitions)
        }
    }

    /// Drops every partition's index: the scheduler that owns a partition finds its `built`
    /// key gone within a second and reads the partition again from its start (one that owns
    /// none rebuilds on its next assignment).
    public func dropIndex() async throws {
        try await pool.withConnection { connection in
            let index = ScheduleIndex(redis: connection, layout: layout)
            for partition in 0..<partitions { try await index.clear(partition) }
        }
    }

    /// The partitions whose index is whole (rebuilt from the topic by their scheduler).
    public func builtPartitions() async throws -> [Int32] {
        try await pool.withConnection { connection in
            let index = ScheduleIndex(redis: connection, layout: layout)
            var built: [Int32] = []
            for partition in 0..<partitions where try await index.isBuilt(partition) { built.append(partition) }
            return built
        }
    }
}

/// The scheduler's due index in Redis, one set of keys per partition `p` of
/// `herald.scheduled` (its owner alone writes them; the hash tag keeps them on one node):
///
/// - `<prefix>:{sched:<p>}:items`: hash, event id -> the latest `ScheduledEvent` JSON;
/// - `<prefix>:{sched:<p>}:due`: sorted set, event id -> its next pending release (ms);
/// - `<prefix>:{sched:<p>}:built`: present once the keys were rebuilt from the partition.
///
/// A derived cache: the partition is the record, and the scheduler rebuilds these keys from it
/// whenever it is assigned the partition or finds `built` gone (a flushed Redis).
struct ScheduleIndex: Sendable {
    let redis: RedisConnection
    let prefix: String

    init(redis: RedisConnection, layout: SlotLayout) {
        self.redis = redis
        self.prefix = layout.prefix
    }

    func itemsKey(_ partition: Int32) -> String { "\(prefix):{sched:\(partition)}:items" }
    func dueKey(_ partition: Int32) -> String { "\(prefix):{sched:\(partition)}:due" }
    func builtKey(_ partition: Int32) -> String { "\(prefix):{sched:\(partition)}:built" }

    /// Removes a partition's keys before it is read again from its start.
    func clear(_ partition: Int32) async throws {
        _ = try await redis.send(.del([itemsKey(partition), dueKey(partition), builtKey(partition)]))
    }

    func markBuilt(_ partition: Int32) async throws {
        _ = try await redis.send(.set(builtKey(partition), "1"))
    }

    func isBuilt(_ partition: Int32) async throws -> Bool {
        try await redis.send(.exists(builtKey(partition))).int == 1
    }

    func item(_ eventId: String, partition: Int32) async throws -> ScheduledEvent? {
        try await items([eventId], partition: partition).first
    }

    /// The stored schedules of `eventIds` (one `HMGET`), those still there, in that order.
    func items(_ eventIds: [String], partition: Int32) async throws -> [ScheduledEvent] {
        guard !eventIds.isEmpty else { return [] }
        let decoder = JSONDecoder()
        return try (try await redis.send(.hmget(itemsKey(partition), eventIds)).array ?? []).compactMap { reply in
            try reply.bytes.map { try decoder.decode(ScheduledEvent.self, from: Data($0)) }
        }
    }

    /// Stores `scheduled` unless the index holds a newer revision; true when stored.
    @discardableResult
    func store(_ scheduled: ScheduledEvent, partition: Int32, onlyIfNewer: Bool) async throws -> Bool {
        if onlyIfNewer, let current = try await item(scheduled.eventId, partition: partition), current.revision >= scheduled.revision {
            return false
        }
        var commands: [RedisCommand] = [
            RedisCommand("HSET", itemsKey(partition), scheduled.eventId, Array(try JSONEncoder().encode(scheduled)))
        ]
        if let next = scheduled.pending.map(\.releaseAt).min() {
            commands.append(RedisCommand("ZADD", dueKey(partition), String(ISO8601Timestamp.milliseconds(next)), scheduled.eventId))
        } else {
            commands.append(RedisCommand("ZREM", dueKey(partition), scheduled.eventId))
        }
        for reply in try await redis.pipeline(commands) { _ = try reply.get() }
        return true
    }

    /// Forgets an event whose schedule ended (its tombstone was read).
    func remove(_ eventId: String, partition: Int32) async throws {
        let commands = [RedisCommand("HDEL", itemsKey(partition), eventId), RedisCommand("ZREM", dueKey(partition), eventId)]
        for reply in try await redis.pipeline(commands) { _ = try reply.get() }
    }

    /// Ids whose next release is at or before `now`, earliest first.
    func due(_ partition: Int32, now: Date, limit: Int = 100) async throws -> [String] {
        let reply = try await redis.send(
            RedisCommand(
                "ZRANGEBYSCORE", dueKey(partition), "-inf", String(ISO8601Timestamp.milliseconds(now)), "LIMIT", "0", String(limit)))
        return reply.array?.compactMap(\.string) ?? []
    }

    /// Every schedule with releases still pending, in the given partitions, by release time.
    func pending(partitions: Range<Int32>) async throws -> [ScheduledEvent] {
        let replies = try await redis.pipeline(partitions.map { .hgetall(itemsKey($0)) })
        var result: [ScheduledEvent] = []
        let decoder = JSONDecoder()
        for reply in replies {
            let fields = try reply.get().array ?? []
            for index in stride(from: 1, to: fields.count, by: 2) {
                guard let bytes = fields[index].bytes, let scheduled = try? decoder.decode(ScheduledEvent.self, from: Data(bytes)),
                    !scheduled.pending.isEmpty, scheduled.state == .scheduled
                else { continue }
                result.append(scheduled)
            }
        }
        return result.sorted {
            ($0.pending.first?.releaseAt ?? .distantFuture, $0.eventId) < ($1.pending.first?.releaseAt ?? .distantFuture, $1.eventId)
        }
    }
}
