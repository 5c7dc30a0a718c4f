import Foundation
import HeraldDomain
import HeraldKafka
import HeraldRedis
import HeraldRegistry
import Logging
import HeraldStreams

/// Rebuilds what the pipeline keeps in Redis about events from the `herald.status` topic:
/// each event's status (`herald:status:<id>`) and its de-duplication claim
/// (`herald:event:<id>`, from the last `herald-claim` header of its records). `herald reindex` runs it after the
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
/// they had left).
///
/// Events still in flight (`accepted` or `processing`) also get their progress hash back:
/// their tasks' progress records are folded in with the fan-out's own script, which counts
/// each task once, so the remaining tasks complete the event as if Redis had never been lost.
/// An event whose every task had finished (the last ones against the emptied Redis) is
/// completed here: its `completed` status goes to Redis and, when a producer is given, to
/// `herald.status`.
public struct StatusRebuilder: Sendable {
    public struct Summary: Sendable, Hashable {
        public var recordsRead = 0
        public var statuses = 0
        public var claims = 0
        /// Events in flight whose progress hash was rebuilt.
        public var inFlight = 0
        /// Events in flight that the rebuilt progress showed complete.
        public var completed = 0
        /// Keys whose value in Redis differs from the log's after the rebuild (0: identical).
        public var mismatched = 0
        /// A short hash of every expected status and claim (key and value, sorted), printed so
        /// two rebuilds or two deployments can be compared.
        public var digest = ""
        public var seconds = 0.0
    }

    public let configuration: PipelineConfiguration
    public let pool: RedisConnectionPool
    /// Writes the `completed` records of events the rebuild completes; nil writes them to
    /// Redis only.
    public let producer: KafkaProducer?
    public var batchSize = 500

    public init(configuration: PipelineConfiguration, pool: RedisConnectionPool, producer: KafkaProducer? = nil) {
        self.configuration = configuration
        self.pool = pool
        self.producer = producer
    }

    public func run(logger: Logger = Logger(label: "herald.reindex")) async throws -> Summary {
        let started = ContinuousClock.now
        var summary = Summary()
        var log = try await fold(logger: logger)
        summary.recordsRead = log.recordsRead
        (summary.inFlight, summary.completed) = try await completeInFlight(&log, logger: logger)
        try await write(log)
        summary.statuses = log.statuses.count
        summary.claims = log.claims.count
        (summary.mismatched, summary.digest) = try await compare(log, logger: logger)
        summary.seconds = (ContinuousClock.now - started).timeInterval
        return summary
    }

    /// What the status topic says, folded: keyed by the record key, `<hub>/<event id>` outside
    /// the default hub (event ids are unique within a hub).
    private struct Folded {
        var recordsRead = 0
        var statuses: [String: StatusRecord] = [:]
        var claims: [String: String] = [:]
        /// Per event not known to be finished: the first progress record of each task.
        var progress: [String: [Int: TaskProgress]] = [:]
        var keys: [String] { statuses.keys.sorted() }
    }

    /// Reads the status topic to its end and folds its records.
    private func fold(logger: Logger) async throws -> Folded {
        var log = Folded()
        var tail = RecordTail(topic: configuration.topics.status, bootstrapServers: configuration.bootstrapServers)
        tail.extra = configuration.kafkaExtra
        for try await message in tail.records(logger: logger) {
            log.recordsRead += 1
            let record: StatusRecord
            switch StatusCoding.decode(message) {
            case .progress(let task):
                let key = message.key.map { String(decoding: $0, as: UTF8.self) } ?? task.eventId
                if log.statuses[key]?.state.isTerminal != true, log.progress[key]?[task.taskIndex] == nil {
                    log.progress[key, default: [:]][task.taskIndex] = task
                }
                continue
            case .status(let status): record = status
            case nil: continue
            }
            let key = record.hub.recordKey(record.eventId)
            // The last claim wins, as in Redis: a scheduled event's release takes the claim
            // over from the record that scheduled it.
            if let claim = message.headers.first(where: { $0.key == StatusCoding.claimHeader })?.value {
                log.claims[key] = String(decoding: claim, as: UTF8.self)
            }
            let folded = StatusRecord.fold(log.statuses[key], record)
            log.statuses[key] = folded
            if folded.state.isTerminal { log.progress[key] = nil }
        }
        return log
    }

    /// Restores the progress of the events in flight, completing those whose every task is in:
    /// how many were in flight, and how many of them it completed.
    private func completeInFlight(_ log: inout Folded, logger: Logger) async throws -> (inFlight: Int, completed: Int) {
        var (inFlight, completedCount) = (0, 0)
        for (id, tasks) in log.progress.sorted(by: { $0.key < $1.key }) {
            guard let status = log.statuses[id], !status.state.isTerminal else { continue }
            inFlight += 1
            guard let completed = try await restoreProgress(status, tasks: tasks.values.sorted { $0.taskIndex < $1.taskIndex })
            else { continue }
            log.statuses[id] = completed
            completedCount += 1
            logger.notice(
                "event completed by the rebuild: its last tasks finished while Redis was empty",
                metadata: ["eventId": "\(id)", "targets": "\(completed.targets.total)"])
            if let producer {
                _ = try await producer.send(StatusCoding.message(completed, topic: configuration.topics.status, claim: log.claims[id]))
            }
        }
        return (inFlight, completedCount)
    }

    /// Writes each status and claim where Redis has none or an older status.
    private func write(_ log: Folded) async throws {
        let ids = log.keys
        for chunk in stride(from: 0, to: ids.count, by: batchSize).map({ ids[$0..<min($0 + batchSize, ids.count)] }) {
            var commands: [RedisCommand] = []
            for key in chunk {
                let record = log.statuses[key]!
                let (id, layout) = (record.eventId, configuration.layout.hub(record.hub))
                if record.state == .rejected {
                    commands.append(
                        .set(
                            layout.statusKey(eventId: id), StatusCoding.encode(record), expireSeconds: configuration.statusTTLSeconds,
                            onlyIfAbsent: true))
                } else {
                    commands.append(StatusScripts.write(record, layout: layout, ttlSeconds: configuration.statusTTLSeconds))
                }
                if let claim = log.claims[key] {
                    commands.append(
                        .set(
                            layout.eventClaimKey(eventId: id), claim, expireSeconds: configuration.eventClaimTTLSeconds, onlyIfAbsent: true)
                    )
                }
            }
            for reply in try await pool.withConnection({ try await $0.pipeline(commands) }) { _ = try reply.get() }
        }
    }

    /// The digest compare: every status and claim the log implies, read back from Redis. How
    /// many differ, and the digest of what was expected.
    private func compare(_ log: Folded, logger: Logger) async throws -> (mismatched: Int, digest: String) {
        var expected: [(key: String, value: [UInt8])] = []
        for key in log.keys {
            let record = log.statuses[key]!
            let layout = configuration.layout.hub(record.hub)
            expected.append((layout.statusKey(eventId: record.eventId), StatusCoding.encode(record)))
            if let claim = log.claims[key] { expected.append((layout.eventClaimKey(eventId: record.eventId), Array(claim.utf8))) }
        }
        var mismatched = 0
        for start in stride(from: 0, to: expected.count, by: batchSize) {
            let chunk = expected[start..<min(start + batchSize, expected.count)]
            let replies = try await pool.withConnection { try await $0.pipeline(chunk.map { RedisCommand.get($0.key) }) }
            for (entry, reply) in zip(chunk, replies) where try reply.get().bytes != entry.value {
                mismatched += 1
                logger.warning("differs from the log after the rebuild", metadata: ["key": "\(entry.key)"])
            }
        }
        return (mismatched, Self.digest(expected))
    }

    /// Folds `tasks` into the event's progress hash with the fan-out's script (each task
    /// counted once, whoever got there first) and returns the `completed` status when every
    /// task is in.
    private func restoreProgress(_ status: StatusRecord, tasks: [TaskProgress]) async throws -> StatusRecord? {
        guard let taskCount = tasks.first?.taskCount, taskCount > 0 else { return nil }
        let key = configuration.layout.hub(status.hub).progressKey(eventId: status.eventId)
        let commands = tasks.map {
            RedisCommand.evalScript(
                StatusScripts.recordProgress, keys: [key],
                arguments: ProgressSnapshot.arguments(for: $0, ttlSeconds: configuration.statusTTLSeconds))
        }
        guard let last = try await pool.withConnection({ try await $0.pipeline(commands) }).last else { return nil }
        let snapshot = try ProgressSnapshot(reply: try last.get())
        guard snapshot.done >= taskCount else { return nil }
        return snapshot.statusRecord(
            eventId: status.eventId, hub: status.hub, taskCount: taskCount, publishedAt: status.timings.publishedAt,
            acceptedAt: status.timings.acceptedAt)
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
