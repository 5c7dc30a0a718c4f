import Foundation
import HeraldDomain
import HeraldRedis
import HeraldRegistry
import Logging

/// Rebuilds what the pipeline keeps in Redis about events from the `herald.status` topic:
/// each event's status (`herald:status:<id>`) and its de-duplication claim
/// (`herald:event:<id>`, from the `herald-claim` header). `herald reindex` runs it after the
/// registrations, so a Redis that was flushed or lost answers `GET /v1/notifications/{id}` as
/// before and still refuses to plan an already delivered id again.
///
/// Records are folded in log order with the rules the writers use: a `completed` or `expired`
/// status is final, one with fewer finished tasks never replaces one with more, and a
/// `rejected` status only fills a gap (a broken copy must not hide a real event). Statuses and
/// claims are written only where Redis has none or an older status, so running it while
/// workers run is safe. Afterwards every expected key is read back and compared byte for byte:
/// the summary's `mismatched` is the digest compare.
///
/// Both are written with the configured lifetimes from now (the log does not say how long
/// they had left). Progress hashes of events still in flight are not rebuilt: an event whose
/// tasks were running when Redis was lost completes when its remaining tasks are redone.
public struct StatusRebuilder: Sendable {
    public struct Summary: Sendable, Hashable {
        public var recordsRead = 0
        public var statuses = 0
        public var claims = 0
        /// Keys whose value in Redis differs from the log's after the rebuild (0: identical).
        public var mismatched = 0
        /// A short hash of every expected status and claim (key and value, sorted), printed so
        /// two rebuilds or two deployments can be compared.
        public var digest = ""
        public var seconds = 0.0
    }

    public let configuration: PipelineConfiguration
    public let pool: RedisConnectionPool
    public var batchSize = 500

    public init(configuration: PipelineConfiguration, pool: RedisConnectionPool) {
        self.configuration = configuration
        self.pool = pool
    }

    public func run(logger: Logger = Logger(label: "herald.reindex")) async throws -> Summary {
        let started = ContinuousClock.now
        var summary = Summary()
        var statuses: [String: StatusRecord] = [:]
        var claims: [String: String] = [:]
        var tail = RecordTail(topic: configuration.topics.status, bootstrapServers: configuration.bootstrapServers)
        tail.extra = configuration.kafkaExtra
        for try await message in tail.records(logger: logger) {
            summary.recordsRead += 1
            guard let value = message.value,
                message.headers.first(where: { $0.key == StatusCoding.typeHeader })?.value == Array("status".utf8),
                let record = try? StatusCoding.decodeStatus(value)
            else { continue }
            if let claim = message.headers.first(where: { $0.key == StatusCoding.claimHeader })?.value,
                claims[record.eventId] == nil
            {
                claims[record.eventId] = String(decoding: claim, as: UTF8.self)
            }
            statuses[record.eventId] = Self.fold(statuses[record.eventId], record)
        }
        let layout = configuration.layout
        let ids = statuses.keys.sorted()
        for chunk in stride(from: 0, to: ids.count, by: batchSize).map({ ids[$0..<min($0 + batchSize, ids.count)] }) {
            var commands: [RedisCommand] = []
            for id in chunk {
                let record = statuses[id]!
                if record.state == .rejected {
                    commands.append(
                        .set(
                            layout.statusKey(eventId: id), StatusCoding.encode(record), expireSeconds: configuration.statusTTLSeconds,
                            onlyIfAbsent: true))
                } else {
                    commands.append(StatusScripts.write(record, layout: layout, ttlSeconds: configuration.statusTTLSeconds))
                }
                if let claim = claims[id] {
                    commands.append(
                        .set(
                            layout.eventClaimKey(eventId: id), claim, expireSeconds: configuration.eventClaimTTLSeconds, onlyIfAbsent: true)
                    )
                }
            }
            for reply in try await pool.withConnection({ try await $0.pipeline(commands) }) { _ = try reply.get() }
        }
        summary.statuses = statuses.count
        summary.claims = claims.count

        // The digest compare: every status and claim the log implies, read back from Redis.
        var expected: [(key: String, value: [UInt8])] = []
        for id in ids {
            expected.append((layout.statusKey(eventId: id), StatusCoding.encode(statuses[id]!)))
            if let claim = claims[id] { expected.append((layout.eventClaimKey(eventId: id), Array(claim.utf8))) }
        }
        for start in stride(from: 0, to: expected.count, by: batchSize) {
            let chunk = expected[start..<min(start + batchSize, expected.count)]
            let replies = try await pool.withConnection { try await $0.pipeline(chunk.map { RedisCommand.get($0.key) }) }
            for (entry, reply) in zip(chunk, replies) where try reply.get().bytes != entry.value {
                summary.mismatched += 1
                logger.warning("differs from the log after the rebuild", metadata: ["key": "\(entry.key)"])
            }
        }
        summary.digest = Self.digest(expected)
        let elapsed = ContinuousClock.now - started
        summary.seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return summary
    }

    /// The status the writers would leave after `current` and then `next` (see `StatusScripts`).
    static func fold(_ current: StatusRecord?, _ next: StatusRecord) -> StatusRecord {
        guard let current else { return next }
        if next.state == .rejected { return current }
        if (current.state == .completed || current.state == .expired) && current.state != next.state { return current }
        if next.tasks.completed < current.tasks.completed { return current }
        return next
    }

    /// The registry's digest hasher over the sorted keys and values, 16 hex digits.
    static func digest(_ entries: [(key: String, value: [UInt8])]) -> String {
        var hasher = DigestHasher()
        for entry in entries.sorted(by: { $0.key < $1.key }) {
            hasher.add(entry.key)
            hasher.add(entry.value)
        }
        return hasher.hex
    }
}
