import HeraldDomain
import Foundation
import HeraldRedis

/// Whether the index in Redis is whole.
///
/// `herald:meta` `epoch` is written when the index has been built from `herald.registrations`
/// (by `herald reindex` or by the indexer role's rebuild), and it disappears with everything
/// else when Redis is flushed or restarts empty. Whoever reads a whole audience (the planner,
/// the fan-out) reads the epoch before and after: no epoch means the index is incomplete, a
/// different one afterwards means it was lost and rebuilt while they read. Both are
/// `IndexNotReady`, a transient failure: the work is retried once the rebuild is done, so
/// nothing is planned or delivered from a partial index.
///
/// A rebuild holds a lease in the same hash (`rebuild` = `<token>:<deadline ms>`), so one
/// process rebuilds at a time and a crashed one's lease runs out. Every script touches
/// `herald:meta` only (one key, so also one hash slot on Redis Cluster).
public enum IndexEpoch {
    /// Reads the epoch: its reply goes to `require` or `verify`.
    public static func read(_ layout: SlotLayout) -> RedisCommand {
        RedisCommand("HGET", layout.metaKey, "epoch", isReadOnly: true)
    }

    /// The epoch in a reply of `read`; `IndexNotReady` when there is none.
    public static func require(_ reply: RedisValue, layout: SlotLayout) throws -> String {
        guard let epoch = reply.string, !epoch.isEmpty else {
            throw IndexNotReady(
                message: "\(layout.metaKey) has no epoch: the registration index is missing or being rebuilt from the log "
                    + "(a worker with the indexer role rebuilds it, or run herald reindex)")
        }
        return epoch
    }

    /// Throws `IndexNotReady` unless a reply of `read` still names `epoch`.
    public static func verify(_ reply: RedisValue, unchanged epoch: String, layout: SlotLayout) throws {
        let now = try require(reply, layout: layout)
        guard now == epoch else {
            throw IndexNotReady(message: "the registration index was rebuilt while it was read (epoch \(epoch) → \(now))")
        }
    }

    /// KEYS[1] meta. ARGV: token, now ms, lease ms, mode. Mode `take`: takes the lease unless
    /// another holder's runs. Mode `renew`: extends the lease only when `token` still holds it
    /// (not after it ran out and was taken, or Redis was flushed). 1 when `token` holds the
    /// lease afterwards, 0 otherwise.
    static let lease = RedisScript(
        #"""
        local held = redis.call('HGET', KEYS[1], 'rebuild')
        local mine = held and string.sub(held, 1, #ARGV[1] + 1) == ARGV[1] .. ':'
        if ARGV[4] == 'renew' then
          if not mine then return 0 end
        elseif held and not mine then
          local deadline = tonumber(string.match(held, ':(%d+)$'))
          if deadline and deadline > tonumber(ARGV[2]) then return 0 end
        end
        redis.call('HSET', KEYS[1], 'rebuild', ARGV[1] .. ':' .. (tonumber(ARGV[2]) + tonumber(ARGV[3])))
        return 1
        """#)

    /// KEYS[1] meta. ARGV: token, new epoch, now ms. Ends the lease; writes the epoch unless
    /// one is there (a reindex of a whole index keeps it). 1 when the lease was still held, 0
    /// when it was lost (Redis flushed during the rebuild: the rebuild must start over).
    static let finish = RedisScript(
        #"""
        local held = redis.call('HGET', KEYS[1], 'rebuild')
        if not held or string.sub(held, 1, #ARGV[1] + 1) ~= ARGV[1] .. ':' then
          return 0
        end
        redis.call('HDEL', KEYS[1], 'rebuild')
        if redis.call('HEXISTS', KEYS[1], 'epoch') == 0 then
          redis.call('HSET', KEYS[1], 'epoch', ARGV[2], 'builtAt', ARGV[3])
        end
        return 1
        """#)
}

/// The registration index is missing, partial or was rebuilt underneath a reader (see
/// `IndexEpoch`). Transient: retry once the rebuild is done.
public struct IndexNotReady: Error, Sendable, CustomStringConvertible {
    public var code: String { "index_not_ready" }
    public var message: String
    public var description: String { "\(code): \(message)" }

    public init(message: String) {
        self.message = message
    }
}

extension RegistrationIndex {
    /// The index's epoch, nil while it is missing or being rebuilt.
    public func epoch() async throws -> String? {
        let reply = try await pool.withConnection { try await $0.send(IndexEpoch.read(layout)) }
        return try? IndexEpoch.require(reply, layout: layout)
    }

    /// Takes the rebuild lease for `token`. False while another holder's lease runs.
    public func takeRebuildLease(token: String, lease: Duration, now: Date = Date()) async throws -> Bool {
        try await leaseScript(mode: "take", token: token, lease: lease, now: now)
    }

    /// Extends the lease `token` holds. False when it holds none any more: the rebuild under
    /// it cannot finish (`finishRebuild` throws) and must start over.
    public func renewRebuildLease(token: String, lease: Duration, now: Date = Date()) async throws -> Bool {
        try await leaseScript(mode: "renew", token: token, lease: lease, now: now)
    }

    private func leaseScript(mode: String, token: String, lease: Duration, now: Date) async throws -> Bool {
        let milliseconds = lease.wholeMilliseconds
        let reply = try await pool.withConnection {
            try await $0.evalScript(
                IndexEpoch.lease, keys: [layout.metaKey],
                arguments: [token, String(Int64(now.timeIntervalSince1970 * 1_000)), String(milliseconds), mode])
        }
        return reply.int == 1
    }

    /// Marks the index whole after a rebuild under `token`'s lease, and returns the epoch.
    /// Throws `IndexNotReady` when the lease was lost on the way (Redis lost its data again).
    @discardableResult
    public func finishRebuild(token: String, now: Date = Date()) async throws -> String {
        let fresh = UUID().uuidString.prefix(13).lowercased()
        let replies = try await pool.withConnection {
            try await $0.pipeline([
                .evalScript(
                    IndexEpoch.finish, keys: [layout.metaKey],
                    arguments: [token, String(fresh), String(Int64(now.timeIntervalSince1970 * 1_000))]),
                IndexEpoch.read(layout),
            ])
        }
        guard try replies[0].get().int == 1 else {
            throw IndexNotReady(message: "Redis lost the index while it was being rebuilt (\(layout.metaKey) was emptied); rebuild again")
        }
        return try IndexEpoch.require(try replies[1].get(), layout: layout)
    }

    /// Declares the index whole without a rebuild, for tools that write every registration
    /// into the index themselves (test fixtures, the benchmark's seeder). Records the slot
    /// layout too (`checkMeta`).
    @discardableResult
    public func markBuilt() async throws -> String {
        try await checkMeta()
        let token = "seed-" + UUID().uuidString.prefix(8).lowercased()
        guard try await takeRebuildLease(token: token, lease: .seconds(30)) else {
            throw IndexNotReady(message: "a rebuild of the index is running; wait for it instead of declaring the index whole")
        }
        return try await finishRebuild(token: token)
    }
}
