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
