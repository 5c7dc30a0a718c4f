import HeraldDomain
import Foundation
import HeraldKafka
import HeraldRedis
import Logging
import Metrics
import ServiceLifecycle

/// Aborts the open transactions of workers that died and never came back under their name.
///
/// A transaction left open by a killed worker hides everything after it on its partitions from
/// every `read_committed` reader (the sender, `herald tail`, analysts) until the broker aborts
/// it. Apache Kafka does so after `transaction.timeout.ms`; the embedded broker never does, and
/// a worker restarted under a new instance id (a rescheduled pod) never reuses the dead one's
/// transactional ids, so nothing would fence them.
///
/// Each worker writes its transactional ids to one Redis hash with the time it last saw them
/// alive (every `interval`). Every worker also reads the hash: an id not seen for `staleAfter`
/// belongs to a dead process. The worker that deletes it (`HDEL` answers 1 to one of them)
/// starts a producer with that id and initializes it, which fences the dead producer and
/// aborts its open transaction, then closes it. A live worker whose heartbeat stalled that
/// long is fenced the same way; its loops start again with new producers, as after any fence.
/// The scheduler's ids are per partition and pass to the partition's next owner: not listed.
public final class AbandonedTransactions: Service, Sendable {
    /// The hash of transactional ids and when each was last seen (ms since 1970).
    public let key: String
    private let ids: [String]
    private let pool: RedisConnectionPool
    private let producerConfiguration: @Sendable (String) -> KafkaProducerConfiguration
    private let interval: Duration
    private let staleAfter: Duration
    private let logger: Logger
    private let aborted = Counter(label: "herald_abandoned_transactions_aborted_total")

    public init(
        configuration: PipelineConfiguration, roles: Set<WorkerRole>, pool: RedisConnectionPool,
        logger: Logger = Logger(label: "herald.transactions")
    ) {
        key = "\(configuration.layout.prefix):transactional-ids"
        ids = configuration.transactionalIds(roles: roles)
        self.pool = pool
        producerConfiguration = { id in
            var producer = configuration.transactionalProducerConfiguration(role: "abandoned", lane: nil, forDeliveries: false)
            producer.transactionalId = id
            return producer
        }
        staleAfter = configuration.abandonedTransactionAfter
        interval = min(.seconds(5), configuration.abandonedTransactionAfter / 4)
        self.logger = logger
    }

    /// Runs until a graceful shutdown (a service that returned early would end the worker).
    public func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                try await heartbeat()
                for id in try await stale() { await abort(id) }
            } catch {
                logger.warning("cannot check the transactional ids of other workers; trying again", metadata: ["error": "\(error)"])
            }
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: self.interval) }
        }
        // A clean exit ends its own transactions: nothing for the others to abort.
        guard !ids.isEmpty else { return }
        _ = try? await pool.withConnection { try await $0.send(RedisCommand("HDEL", arguments: [key] + ids)) }
    }

    private func heartbeat() async throws {
        guard !ids.isEmpty else { return }
        let now = String(Int64(Date().timeIntervalSince1970 * 1_000))
        let arguments: [any RedisArgument] = [key] + ids.flatMap { [$0, now] }
        _ = try await pool.withConnection { try await $0.send(RedisCommand("HSET", arguments: arguments)) }
    }

    /// The ids last seen more than `staleAfter` ago that this worker took from the hash.
    private func stale() async throws -> [String] {
        let reply = try await pool.withConnection { try await $0.send(RedisCommand("HGETALL", key, isReadOnly: true)) }
        let flat = reply.array ?? []
        let limit = Int64((Date().timeIntervalSince1970 - staleAfter.timeInterval) * 1_000)
        var taken: [String] = []
        for index in stride(from: 0, to: flat.count - 1, by: 2) {
            guard let id = flat[index].string, !ids.contains(id), let seen = flat[index + 1].string.flatMap({ Int64($0) }),
                seen < limit
            else { continue }
            let deleted = try await pool.withConnection { try await $0.send(RedisCommand("HDEL", key, id)) }
            if deleted.int == 1 { taken.append(id) }
        }
        return taken
    }

    private func abort(_ id: String) async {
        do {
            let producer = try KafkaProducer(configuration: producerConfiguration(id), logger: logger)
            do {
                try await producer.initTransactions()
            } catch {
                await producer.shutdown(flushTimeout: .seconds(1))
                throw error
            }
            await producer.shutdown(flushTimeout: .seconds(1))
            aborted.increment()
            logger.notice(
                "fenced the transactional id of a worker not seen for a while; its open transaction, if any, is aborted",
                metadata: ["transactionalId": "\(id)", "notSeenFor": "more than \(staleAfter.timeInterval) s"])
        } catch {
            logger.warning(
                "cannot fence an abandoned transactional id; it is retried when seen again",
                metadata: ["transactionalId": "\(id)", "error": "\(error)"])
            _ = try? await pool.withConnection { try await $0.send(RedisCommand("HSETNX", key, id, "0")) }
        }
    }
}
