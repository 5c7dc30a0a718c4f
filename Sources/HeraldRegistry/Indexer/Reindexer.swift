import HeraldDomain
import Foundation
import HeraldKafka
import Logging

/// Rebuilds the Redis index from `herald.registrations`: reads every partition from the
/// beginning past the high watermark taken at the start until nothing more arrives, and
/// applies each record with the same scripts as the indexer. Nothing is committed (partitions are assigned, no group).
///
/// Speed comes from large polls, one pipeline per batch, and several pipelines in flight at
/// once on different pooled connections. Running them out of order is safe: every apply is
/// version-checked, so the final state is that of the newest version of every id whatever
/// the arrival order.
public struct Reindexer: Sendable {
    /// Reported after every batch.
    public struct Progress: Sendable, Hashable {
        public var recordsRead: Int
        /// Records between the low and high watermarks at the start: an estimate (a compacted
        /// topic has gaps; records written during the reindex are read too), never below
        /// `recordsRead`.
        public var recordsTotal: Int
    }

    public struct Summary: Sendable, Hashable {
        /// Registration upserts that changed Redis.
        public var applied = 0
        /// Registration deletes that changed Redis.
        public var deleted = 0
        /// Installation documents (and installation deletes) that changed Redis.
        public var installations = 0
        /// Changes older than what Redis already held, and unreadable records.
        public var ignored = 0
        public var recordsRead = 0
        public var seconds = 0.0
    }

    public let configuration: RegistryConfiguration
    public let consumerConfiguration: KafkaConsumerConfiguration
    public let index: RegistrationIndex
    /// Pipelines applied concurrently; at most the Redis pool's size is useful.
    public var concurrency: Int
    /// Records per poll and per pipeline.
    public var batchSize: Int
    /// The Herald slots to rebuild, nil for all (`herald reindex --slots`). Every template
    /// seen is written back whatever its registration's slot: template keys hash elsewhere
    /// and may have lived on the node whose slots are being rebuilt.
    public var slots: Set<Int>?
    private let logger: Logger

    public init(
        configuration: RegistryConfiguration, consumerConfiguration: KafkaConsumerConfiguration,
        index: RegistrationIndex, concurrency: Int = 4, batchSize: Int = 5_000,
        logger: Logger = Logger(label: "herald.registry.reindex")
    ) {
        self.configuration = configuration
        var consumer = consumerConfiguration
        // A private group id: never committed, it only satisfies clients that want one.
        consumer.groupId = "herald-reindex-\(UUID().uuidString.prefix(8).lowercased())"
        consumer.enableAutoCommit = false
        consumer.maxPollRecords = max(consumer.maxPollRecords, batchSize)
        consumer.queuedMinMessages = max(consumer.queuedMinMessages, 2 * batchSize)
        self.consumerConfiguration = consumer
        self.index = index
        self.concurrency = max(1, concurrency)
        self.batchSize = batchSize
        self.logger = logger
    }

    public func run(progress: @escaping @Sendable (Progress) -> Void = { _ in }) async throws -> Summary {
        let started = ContinuousClock.now
        try await index.checkMeta()
        let topic = configuration.registrationsTopic
        let admin = try KafkaAdmin(
            configuration: {
                var admin = KafkaAdminConfiguration(bootstrapServers: consumerConfiguration.bootstrapServers)
                admin.extra = consumerConfiguration.extra
                return admin
            }())
        let partitionCount = try await admin.describeTopic(topic).partitionCount
        let consumer = try KafkaConsumer(configuration: consumerConfiguration, logger: logger)
        do {
            let summary = try await replay(
                topic: topic, partitionCount: partitionCount, consumer: consumer, started: started, progress: progress)
            try? await consumer.close()
            return summary
        } catch {
            try? await consumer.close()
            throw error
        }
    }

    private func replay(
        topic: String, partitionCount: Int, consumer: KafkaConsumer, started: ContinuousClock.Instant,
        progress: @escaping @Sendable (Progress) -> Void
    ) async throws -> Summary {

        var end: [Int32: Int64] = [:]
        var total = 0
        var starts: [KafkaTopicPartitionOffset] = []
        for partition in 0..<Int32(partitionCount) {
            let marks = try await consumer.queryWatermarkOffsets(topic: topic, partition: partition)
            if marks.high > marks.low {
                end[partition] = marks.high
                total += Int(marks.high - marks.low)
                starts.append(KafkaTopicPartitionOffset(topic: topic, partition: partition, offset: marks.low))
            }
        }
        var summary = Summary()
        progress(Progress(recordsRead: 0, recordsTotal: total))
        guard !starts.isEmpty else {
            summary.seconds = Self.seconds(since: started)
            return summary
        }
        try consumer.assign(starts)

        var remaining = end
        var idlePolls = 0
        try await withThrowingTaskGroup(of: Summary.self) { group in
            var inFlight = 0
            while true {
                let batch = try await consumer.pollBatch(maxMessages: batchSize, timeout: .seconds(1))
                if batch.isEmpty {
                    // Past every high watermark and nothing more arrives: done. Records beyond the
                    // watermarks are applied too (they are newer writes, and version-checked);
                    // draining until quiet also covers brokers whose watermark undercounts the
                    // last batch (Tansu) and end offsets that hold only transaction markers.
                    if remaining.isEmpty { break }
                    idlePolls += 1
                    if idlePolls >= 10 {
                        logger.warning(
                            "reindex stopped waiting for partitions whose last offsets never arrived",
                            metadata: [
                                "partitions": "\(remaining.keys.sorted())"
                            ])
                        break
                    }
                    continue
                }
                idlePolls = 0
                for message in batch {
                    if let last = remaining[message.partition], message.offset + 1 >= last {
                        remaining[message.partition] = nil
                    }
                }
                summary.recordsRead += batch.count
                progress(Progress(recordsRead: summary.recordsRead, recordsTotal: max(total, summary.recordsRead)))
                if inFlight == concurrency, let done = try await group.next() {
                    summary.add(done)
                    inFlight -= 1
                }
                group.addTask { try await apply(batch) }
                inFlight += 1
            }
            for try await done in group { summary.add(done) }
        }
        summary.seconds = Self.seconds(since: started)
        logger.info(
            "reindex finished",
            metadata: [
                "records": "\(summary.recordsRead)", "applied": "\(summary.applied)", "deleted": "\(summary.deleted)",
                "installations": "\(summary.installations)", "ignored": "\(summary.ignored)", "seconds": "\(summary.seconds)",
            ])
        return summary
    }

    private func apply(_ records: [KafkaMessage]) async throws -> Summary {
        var (changes, unreadable) = RegistryRecord.decode(records, logger: logger)
        if let slots {
            let outside = changes.filter { !slots.contains(index.layout.slot(of: $0.change.slotId)) }
            for (hub, group) in Dictionary(grouping: outside, by: \.hub) {
                try await index.hub(hub).restoreTemplates(of: group.map(\.change))
            }
            changes.removeAll { !slots.contains(index.layout.slot(of: $0.change.slotId)) }
        }
        let flags = try await index.apply(changes)
        var summary = Summary()
        summary.ignored = unreadable.count
        for (record, applied) in zip(changes, flags) {
            guard applied else {
                summary.ignored += 1
                continue
            }
            switch record.change {
            case .registration: summary.applied += 1
            case .registrationDeleted: summary.deleted += 1
            case .installation, .installationDeleted: summary.installations += 1
            }
        }
        return summary
    }

    private static func seconds(since start: ContinuousClock.Instant) -> Double {
        (ContinuousClock.now - start).timeInterval
    }
}

extension Reindexer.Summary {
    mutating func add(_ other: Reindexer.Summary) {
        applied += other.applied
        deleted += other.deleted
        installations += other.installations
        ignored += other.ignored
    }
}
