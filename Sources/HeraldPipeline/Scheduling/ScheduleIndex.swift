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

    /// Schedules with a release pending in the index, over every partition (`ZCARD` of the due sets).
    public func dueCount() async throws -> Int {
        try await pool.withConnection { connection in
            let index = ScheduleIndex(redis: connection, layout: layout)
            let replies = try await connection.pipeline((0..<partitions).map { RedisCommand("ZCARD", index.dueKey($0)) })
            return try replies.reduce(0) { $0 + (try $1.get().int ?? 0) }
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

    /// A schedule as the index stores it: its JSON (a `ScheduledEvent`, as on the topic) and
    /// what the index keys on.
    struct Entry: Sendable {
        /// The schedule's key (`ScheduledEvent.scheduleKey`): the field of `items`, the member of `due`.
        var eventId: String
        var revision: Int
        /// Its next pending release; nil when nothing is pending.
        var nextReleaseAt: Date?
        var json: [UInt8]

        init(_ scheduled: ScheduledEvent) throws {
            self.init(
                eventId: scheduled.scheduleKey, revision: scheduled.revision, nextReleaseAt: scheduled.nextReleaseAt,
                json: Array(try JSONEncoder().encode(scheduled)))
        }

        init(eventId: String, revision: Int, nextReleaseAt: Date?, json: [UInt8]) {
            self.eventId = eventId
            self.revision = revision
            self.nextReleaseAt = nextReleaseAt
            self.json = json
        }
    }

    /// One change to a partition's index.
    enum Write: Sendable {
        /// The schedule's latest state, unless the index already holds its revision or a newer one
        /// (a record of this scheduler's own, read back after it stored what came next).
        case store(Entry)
        /// The schedule's state, whatever the index holds (what this scheduler just committed).
        case replace(Entry)
        /// A tombstone: the schedule ended.
        case remove(String)
    }

    /// Applies `writes` in order, in one `HMGET` (the revisions `store` compares with) and one pipeline.
    func apply(_ writes: [Write], partition: Int32) async throws {
        guard !writes.isEmpty else { return }
        var compared: [String] = []
        var seen: Set<String> = []
        for case .store(let entry) in writes where seen.insert(entry.eventId).inserted { compared.append(entry.eventId) }
        var revisions: [String: Int] = [:]
        if !compared.isEmpty {
            let decoder = JSONDecoder()
            let replies = try await redis.send(.hmget(itemsKey(partition), compared)).array ?? []
            for (eventId, reply) in zip(compared, replies) {
                guard let bytes = reply.bytes else { continue }
                revisions[eventId] = try decoder.decode(ScheduleHead.self, from: Data(bytes)).revision
            }
        }
        var commands: [RedisCommand] = []
        for write in writes {
            switch write {
            case .store(let entry), .replace(let entry):
                if case .store = write, let current = revisions[entry.eventId], current >= entry.revision { continue }
                revisions[entry.eventId] = entry.revision
                commands.append(RedisCommand("HSET", itemsKey(partition), entry.eventId, entry.json))
                if let next = entry.nextReleaseAt {
                    commands.append(RedisCommand("ZADD", dueKey(partition), String(ISO8601Timestamp.milliseconds(next)), entry.eventId))
                } else {
                    commands.append(RedisCommand("ZREM", dueKey(partition), entry.eventId))
                }
            case .remove(let eventId):
                revisions[eventId] = nil
                commands += [RedisCommand("HDEL", itemsKey(partition), eventId), RedisCommand("ZREM", dueKey(partition), eventId)]
            }
        }
        guard !commands.isEmpty else { return }
        for reply in try await redis.pipeline(commands) { _ = try reply.get() }
    }

    /// Ids whose next release is at or before `time`, earliest first, at most `limit`.
    func due(_ partition: Int32, through time: Date, limit: Int) async throws -> [String] {
        let reply = try await redis.send(
            RedisCommand(
                "ZRANGEBYSCORE", dueKey(partition), "-inf", String(ISO8601Timestamp.milliseconds(time)), "LIMIT", "0", String(limit)))
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
            ($0.nextReleaseAt ?? .distantFuture, $0.eventId) < ($1.nextReleaseAt ?? .distantFuture, $1.eventId)
        }
    }
}

/// What the scheduler reads of a schedule record without decoding its event: a cancel request,
/// or a schedule's id, revision and releases.
struct ScheduleHead: Decodable {
    var eventId: String
    var revision: Int
    var releases: [ScheduledRelease]
    var isCancel: Bool

    enum CodingKeys: String, CodingKey {
        case eventId, revision, releases, cancel
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        eventId = try container.decode(String.self, forKey: .eventId)
        isCancel = container.contains(.cancel)
        revision = try container.decodeIfPresent(Int.self, forKey: .revision) ?? 1
        releases = isCancel ? [] : try container.decode([ScheduledRelease].self, forKey: .releases)
    }

    /// The next pending release.
    var nextReleaseAt: Date? { releases.nextPendingReleaseAt }
}
