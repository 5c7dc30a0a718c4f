import Foundation
import HeraldDomain
import HeraldKafka
import HeraldRedis
import HeraldRegistry

/// JSON for `herald.status` values and `herald:status:<id>`: the domain's Codable shapes.
enum StatusCoding {
    /// Distinguishes the two kinds of `herald.status` values for consumers that do not
    /// want to sniff fields (`state` vs `taskIndex`).
    static let typeHeader = "herald-type"
    /// On status records of planned events: the event's de-duplication claim
    /// (`<partition>:<offset>:<fingerprint>`), so `herald reindex` can rebuild the claims from
    /// the log. Carried by the `accepted`/`expired` record and again by the final one, which is
    /// the one compaction keeps.
    static let claimHeader = "herald-claim"

    /// The `herald.status` record of `record` (key: the event id), with the event's claim when
    /// the writer knows it.
    static func message(_ record: StatusRecord, topic: String, claim: String? = nil) -> KafkaOutgoingMessage {
        var headers = [KafkaHeader(key: typeHeader, value: "status")]
        if let claim { headers.append(KafkaHeader(key: claimHeader, value: claim)) }
        return KafkaOutgoingMessage(topic: topic, key: Array(record.eventId.utf8), value: encode(record), headers: headers)
    }

    static func encode(_ record: StatusRecord) -> [UInt8] {
        Array((try? encoder.encode(record)) ?? Data())
    }

    static func encode(_ progress: TaskProgress) -> [UInt8] {
        Array((try? encoder.encode(progress)) ?? Data())
    }

    static func decodeStatus(_ bytes: [UInt8]) throws -> StatusRecord {
        try JSONDecoder().decode(StatusRecord.self, from: Data(bytes))
    }

    static func decodeProgress(_ bytes: [UInt8]) throws -> TaskProgress {
        try JSONDecoder().decode(TaskProgress.self, from: Data(bytes))
    }

    private static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        // Sorted keys: the same record always has the same bytes, on the topic and in Redis, so
        // a rebuilt status can be compared byte for byte (JSONEncoder's order is not stable).
        encoder.outputFormatting = [.withoutEscapingSlashes, .sortedKeys]
        return encoder
    }
}

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
    public func status(eventId: String) async throws -> StatusRecord? {
        let reply = try await pool.withConnection { connection in
            try await connection.send(.get(layout.statusKey(eventId: eventId)))
        }
        guard let bytes = reply.bytes else { return nil }
        return try StatusCoding.decodeStatus(bytes)
    }

    /// The stored JSON as is, for callers that pass it through without re-encoding.
    public func statusJSON(eventId: String) async throws -> [UInt8]? {
        try await pool.withConnection { connection in
            try await connection.send(.get(layout.statusKey(eventId: eventId)))
        }.bytes
    }
}
