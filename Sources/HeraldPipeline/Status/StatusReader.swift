import Foundation
import HeraldDomain
import HeraldRedis
import HeraldRegistry
import HeraldStreams

/// Reads the latest status of an event from `herald:status:<id>` for
/// `GET /v1/notifications/{id}`. The planner and fan-out keep that key current (accepted,
/// processing, completed, expired, rejected) for seven days.
public struct StatusReader: Sendable {
    public let layout: SlotLayout
    private let pool: RedisConnectionPool

    public init(pool: RedisConnectionPool, layout: SlotLayout = SlotLayout()) {
        self.pool = pool
        self.layout = layout
    }

    /// The status, or nil when the event is unknown (never published, not planned yet, or
    /// older than seven days).
    ///
    /// With the sender role's counts of receipts so far (`push`), when it has sent any, and the
    /// ids of its corrections (`corrections`), when it has any.
    public func status(eventId: String, hub: HubName = .default) async throws -> StatusRecord? {
        let layout = layout.hub(hub)
        let replies = try await pool.withConnection { connection in
            try await connection.pipeline([
                .get(layout.statusKey(eventId: eventId)), .hgetall(layout.pushCountsKey(eventId: eventId)),
                .smembers(layout.correctionsKey(eventId: eventId)),
            ])
        }
        guard let bytes = try replies[0].get().bytes else { return nil }
        var record = try StatusCoding.decodeStatus(bytes)
        if case .array(let values) = try replies[1].get() {
            var fields: [String: Int] = [:]
            var index = 0
            while index + 1 < values.count {
                if let field = values[index].string, let count = values[index + 1].string.flatMap({ Int($0) }) { fields[field] = count }
                index += 2
            }
            record.push = StatusRecord.pushCounts(fields: fields)
            // Receipts `sent` against the deliveries, once the fan-out says how many there are.
            if record.state.isTerminal, let sent = ReachCurve(points: Reach.sentPoints(fields: fields), total: record.targets.total) {
                record.reach = Reach(committed: record.reach?.committed, sent: sent)
            }
        }
        if case .array(let values) = try replies[2].get(), !values.isEmpty {
            record.corrections = values.compactMap(\.string).sorted()
        }
        return record
    }

    /// The hub's most recent events (`SlotLayout.recentKey`), newest first, at most `limit`,
    /// each with its latest status (with the sender's counts); events whose status has expired
    /// are left out.
    public func recent(hub: HubName = .default, limit: Int) async throws -> [StatusRecord] {
        let key = layout.hub(hub).recentKey
        let ids =
            try await pool.withConnection {
                try await $0.send(RedisCommand("ZREVRANGE", key, "0", String(max(0, limit - 1)), isReadOnly: true))
            }.array?.compactMap(\.string) ?? []
        var records: [StatusRecord] = []
        for id in ids {
            if let record = try await status(eventId: id, hub: hub) { records.append(record) }
        }
        return records
    }

    /// The event's reach over time (`ReachSeries`): its deliveries committed, sent and opened,
    /// by milliseconds from its publish; nil when the event is unknown.
    public func reachSeries(eventId: String, hub: HubName = .default) async throws -> ReachSeries? {
        let layout = layout.hub(hub)
        let replies = try await pool.withConnection { connection in
            try await connection.pipeline([
                .get(layout.statusKey(eventId: eventId)), .hgetall(layout.progressKey(eventId: eventId)),
                .hgetall(layout.pushCountsKey(eventId: eventId)), .hgetall(layout.engagementsKey(eventId: eventId)),
            ])
        }
        guard let bytes = try replies[0].get().bytes else { return nil }
        let record = try StatusCoding.decodeStatus(bytes)
        let counts = { (reply: RedisValue) -> [String: Int] in
            (reply.fieldValuePairs ?? [:]).compactMapValues { $0.string.flatMap { Int($0) } }
        }
        return ReachSeries(
            progress: counts(try replies[1].get()), push: counts(try replies[2].get()), engagements: counts(try replies[3].get()),
            startMs: ISO8601Timestamp.milliseconds(record.timings.publishedAt ?? record.timings.acceptedAt))
    }

    /// A rehearsal's previews, one per (platform, template), in that order.
    public func previews(eventId: String, hub: HubName = .default) async throws -> [RehearsalPreview] {
        let key = layout.hub(hub).previewsKey(eventId: eventId)
        let reply = try await pool.withConnection { try await $0.send(.hgetall(key)) }
        let decoder = JSONDecoder()
        return (reply.fieldValuePairs ?? [:]).sorted { $0.key < $1.key }.compactMap { _, value in
            value.bytes.flatMap { try? decoder.decode(RehearsalPreview.self, from: Data($0)) }
        }
    }

    /// A test send's receipts so far, by registration id (`SlotLayout.testOutcomesKey`).
    public func testOutcomes(eventId: String, hub: HubName = .default) async throws -> [String: (outcome: PushOutcome, reason: String?)] {
        let key = layout.hub(hub).testOutcomesKey(eventId: eventId)
        let reply = try await pool.withConnection { try await $0.send(.hgetall(key)) }
        var outcomes: [String: (outcome: PushOutcome, reason: String?)] = [:]
        for (registration, value) in reply.fieldValuePairs ?? [:] {
            guard let text = value.string else { continue }
            let parts = text.split(separator: "\t", maxSplits: 1)
            guard let first = parts.first, let outcome = PushOutcome(rawValue: String(first)) else { continue }
            outcomes[registration] = (outcome, parts.count > 1 ? String(parts[1]) : nil)
        }
        return outcomes
    }

    /// Deliveries per second of the deployment's last fan-out of at least
    /// `StatusReader.throughputMinimum` deliveries (`herald:meta` `throughput`), nil before one.
    public func measuredThroughput() async throws -> Int? {
        let key = layout.metaKey
        return try await pool.withConnection { try await $0.send(RedisCommand("HGET", key, "throughput", isReadOnly: true)) }.string
            .flatMap { Int($0) }
    }

    /// The smallest fan-out whose speed is recorded as the deployment's throughput: smaller
    /// ones are mostly fixed costs (planning, one transaction).
    public static let throughputMinimum = 10_000

    /// The stored JSON as is, for callers that pass it through without re-encoding.
    public func statusJSON(eventId: String, hub: HubName = .default) async throws -> [UInt8]? {
        let layout = layout.hub(hub)
        return try await pool.withConnection { connection in
            try await connection.send(.get(layout.statusKey(eventId: eventId)))
        }.bytes
    }
}
