import Foundation
import HeraldKafka
import Logging
import Metrics
import ServiceLifecycle
import Synchronization

/// The indexer role: consumes `herald.registrations` in a consumer group and applies every
/// change to Redis, then commits. Scaling is more members in the same group.
///
/// Each batch is one poll, one pipeline of version-checked Lua applies and one commit of the
/// batch's offsets, made only after Redis answered: a crash between apply and commit replays
/// the batch, which the version checks turn into no-ops. Every `sweepInterval` the indexer
/// also removes expired registrations. On graceful shutdown it finishes the batch in hand,
/// commits it and leaves the group. A record it cannot read is handed to `deadLetters` (the
/// worker writes it to the dead-letter topic with its reason) before the batch is committed.
public final class RegistrationIndexer: Service, Sendable {
    /// Where unreadable records go, each with what is wrong with it; throws when they could not
    /// be kept (the batch is then retried, not committed).
    public typealias DeadLetters = @Sendable (_ records: [(message: KafkaMessage, problem: String)]) async throws -> Void

    /// What the indexer has done since it started.
    public struct Statistics: Sendable, Hashable {
        public var applied = 0
        /// Changes older than (or equal to) what Redis held, and unreadable records.
        public var ignored = 0
        public var expired = 0
        public var batches = 0
    }

    public let configuration: RegistryConfiguration
    public let consumerConfiguration: KafkaConsumerConfiguration
    public let index: RegistrationIndex
    private let logger: Logger
    private let deadLetters: DeadLetters?
    private let state = Mutex(Statistics())
    private let appliedCounter = Counter(label: "herald_registrations_applied_total")
    private let ignoredCounter = Counter(label: "herald_registrations_ignored_total")
    private let expiredCounter = Counter(label: "herald_registrations_expired_total")
    /// A batch waits while a breaking alert fans out (`AlertYield`).
    let alertYield: AlertYield

    /// - Parameter consumerConfiguration: broker address and client settings; the group is
    ///   `configuration.indexerGroup` unless one is set here.
    public init(
        configuration: RegistryConfiguration, consumerConfiguration: KafkaConsumerConfiguration,
        index: RegistrationIndex, deadLetters: DeadLetters? = nil, logger: Logger = Logger(label: "herald.registry.indexer")
    ) {
        self.deadLetters = deadLetters
        self.configuration = configuration
        var consumer = consumerConfiguration
        if consumer.groupId == nil { consumer.groupId = configuration.indexerGroup }
        consumer.enableAutoCommit = false
        consumer.autoOffsetReset = .earliest
        consumer.maxPollRecords = max(consumer.maxPollRecords, configuration.indexerBatchSize)
        // The API writes its changes through to Redis itself, so the indexer may gather a
        // stream of writes into fewer, fuller fetches instead of one per write.
        consumer.fetchMinBytes = max(consumer.fetchMinBytes, 64 * 1024)
        consumer.fetchWaitMaxMs = max(consumer.fetchWaitMaxMs, 100)
        self.consumerConfiguration = consumer
        self.index = index
        self.logger = logger
        self.alertYield = AlertYield(index: index, configuration: configuration)
    }

    public var statistics: Statistics { state.withLock { $0 } }

    /// Runs until a graceful shutdown. Redis or Kafka failing under it never ends the role: a
    /// Redis failure is retried with backoff, a failed poll polls again.
    public func run() async throws {
        var delay = Duration.milliseconds(100)
        while true {
            do {
                try await index.checkMeta()
                break
            } catch let error as RegistryMetaMismatch {
                throw error  // the index was built for another slot count or prefix: fatal
            } catch {
                if Task.isShuttingDownGracefully || Task.isCancelled { return }
                logger.warning("cannot read the index's layout from Redis yet; retrying", metadata: ["error": "\(error)"])
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(5))
            }
        }
        let consumer = try KafkaConsumer(configuration: consumerConfiguration, logger: logger)
        try consumer.subscribe(topics: [configuration.registrationsTopic])
        logger.info(
            "indexer started",
            metadata: [
                "topic": "\(configuration.registrationsTopic)", "group": "\(consumerConfiguration.groupId ?? "")",
            ])
        var nextSweep = ContinuousClock.now
        do {
            while !Task.isShuttingDownGracefully && !Task.isCancelled {
                let batch: [KafkaMessage]
                do {
                    // A record ends the wait at once; the timeout only bounds how soon an idle
                    // indexer notices a shutdown or a due sweep.
                    batch = try await consumer.pollBatch(maxMessages: configuration.indexerBatchSize, timeout: .seconds(1))
                } catch {
                    logger.warning("poll failed; polling again", metadata: ["error": "\(error)"])
                    try? await Task.sleep(for: .milliseconds(250))
                    continue
                }
                if !batch.isEmpty {
                    guard try await applyWithRetry(batch) else { break }
                    await commit(batch, consumer: consumer)
                }
                if ContinuousClock.now >= nextSweep {
                    await sweep()
                    nextSweep = ContinuousClock.now.advanced(by: .seconds(configuration.sweepInterval))
                }
            }
        } catch {
            try? await consumer.close()
            throw error
        }
        try await consumer.close()
        logger.info("indexer stopped", metadata: ["applied": "\(statistics.applied)", "ignored": "\(statistics.ignored)"])
    }

    /// Applies a batch, retrying Redis failures with backoff. False when shutdown came first
    /// (the batch is then neither applied for sure nor committed; the next owner replays it).
    private func applyWithRetry(_ batch: [KafkaMessage]) async throws -> Bool {
        let (changes, unreadable) = RegistryRecord.decode(batch, logger: logger)
        // The API has written most of these through already; they can wait for an alert.
        await alertYield.waitWhileBreaking()
        var delay = Duration.milliseconds(100)
        var lettered = unreadable.isEmpty || deadLetters == nil
        while true {
            do {
                if !lettered, let deadLetters {
                    try await deadLetters(unreadable)
                    lettered = true
                }
                let flags = try await index.apply(changes)
                let applied = flags.count(where: { $0 })
                let ignored = flags.count - applied + unreadable.count
                state.withLock {
                    $0.applied += applied
                    $0.ignored += ignored
                    $0.batches += 1
                }
                appliedCounter.increment(by: applied)
                ignoredCounter.increment(by: ignored)
                return true
            } catch {
                logger.warning(
                    lettered ? "applying a batch to Redis failed; retrying" : "dead-lettering unreadable registry records failed; retrying",
                    metadata: [
                        "records": "\(batch.count)", "error": "\(error)",
                    ])
                if Task.isShuttingDownGracefully || Task.isCancelled { return false }
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(5))
            }
        }
    }

    /// Commits the offset after the last record of each partition in the batch. A failed
    /// commit (for example during a rebalance) is logged: the records are replayed later,
    /// harmlessly.
    private func commit(_ batch: [KafkaMessage], consumer: KafkaConsumer) async {
        var next: [KafkaTopicPartition: Int64] = [:]
        for message in batch {
            next[message.topicPartition] = max(next[message.topicPartition] ?? 0, message.offset + 1)
        }
        let offsets = next.map { KafkaTopicPartitionOffset(topic: $0.key.topic, partition: $0.key.partition, offset: $0.value) }
        do {
            try await consumer.commit(offsets)
        } catch {
            logger.warning("committing indexer offsets failed; the records will be applied again", metadata: ["error": "\(error)"])
        }
    }

    private func sweep() async {
        do {
            var removed = 0
            for hub in try await index.hubs() {
                removed += try await index.hub(hub).sweepExpired(batchPerSlot: configuration.sweepBatchPerSlot)
            }
            if removed > 0 {
                state.withLock { $0.expired += removed }
                expiredCounter.increment(by: removed)
                logger.debug("expired registrations removed", metadata: ["count": "\(removed)"])
            }
        } catch {
            logger.warning("expiry sweep failed", metadata: ["error": "\(error)"])
        }
    }
}

extension RegistryRecord {
    /// The records of a batch, in order, and those that could not be read with what is wrong
    /// with each (logged and skipped: one bad record must not stop the index).
    static func decode(_ batch: [KafkaMessage], logger: Logger) -> (
        changes: [RegistryRecord], unreadable: [(message: KafkaMessage, problem: String)]
    ) {
        var changes: [RegistryRecord] = []
        changes.reserveCapacity(batch.count)
        var unreadable: [(message: KafkaMessage, problem: String)] = []
        for message in batch {
            do {
                changes.append(try RegistryRecord(message: message))
            } catch {
                unreadable.append((message, error.message))
                logger.error(
                    "skipping unreadable registry record",
                    metadata: [
                        "partition": "\(message.partition)", "offset": "\(message.offset)", "error": "\(error.message)",
                    ])
            }
        }
        return (changes, unreadable)
    }
}
