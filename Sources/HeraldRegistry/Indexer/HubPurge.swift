import HeraldDomain
import HeraldKafka
import Logging

/// Forgets a deleted hub's devices: replays `herald.registrations`, and for each registration and
/// installation of the hub whose newest record is not a deletion, writes its deletion (one
/// version newer) through the log. The indexers remove them from Redis as they remove any
/// deleted registration, compaction keeps only the tombstones (for `delete.retention.ms`), and
/// a reindex finds nothing of the hub. Run it after the hub is deleted: a hub created again under
/// the name then starts empty.
public struct HubPurge: Sendable {
    public struct Summary: Sendable, Hashable {
        public var recordsRead = 0
        public var registrations = 0
        public var installations = 0
    }

    let configuration: RegistryConfiguration
    let consumerConfiguration: KafkaConsumerConfiguration
    let log: RegistrationLog
    let hub: HubName
    let logger: Logger

    /// `consumerConfiguration`: a consumer without a group (the purge assigns every partition).
    public init(
        hub: HubName, configuration: RegistryConfiguration, consumerConfiguration: KafkaConsumerConfiguration, log: RegistrationLog,
        logger: Logger = Logger(label: "herald.purge")
    ) {
        self.hub = hub
        self.configuration = configuration
        var consumer = consumerConfiguration
        consumer.groupId = nil
        consumer.enableAutoCommit = false
        self.consumerConfiguration = consumer
        self.log = log
        self.logger = logger
    }

    /// The newest record of one key of the hub.
    struct Newest {
        var version: Int64
        var change: RegistryChange
    }

    public func run() async throws -> Summary {
        var summary = Summary()
        let newest = try await replay(&summary)
        var deletions: [RegistryChange] = []
        for (_, record) in newest where !record.change.isDelete {
            switch record.change {
            case .registration(let entry):
                deletions.append(.registrationDeleted(id: entry.id, version: record.version + 1))
                summary.registrations += 1
            case .installation(let id, _, _):
                deletions.append(.installationDeleted(id: id, version: record.version + 1))
                summary.installations += 1
            case .registrationDeleted, .installationDeleted:
                break
            }
        }
        // In slices, so a hub of millions is not millions of sends in flight at once.
        var start = 0
        while start < deletions.count {
            let end = min(start + 1_000, deletions.count)
            try await log.write(Array(deletions[start..<end]), hub: hub)
            start = end
        }
        logger.info(
            "hub purged",
            metadata: [
                "hub": "\(hub)", "records": "\(summary.recordsRead)", "registrations": "\(summary.registrations)",
                "installations": "\(summary.installations)",
            ])
        return summary
    }

    /// Every partition from its first offset to past its high watermark: the newest record of
    /// each of the hub's keys.
    private func replay(_ summary: inout Summary) async throws -> [String: Newest] {
        let topic = configuration.registrationsTopic
        var adminConfiguration = KafkaAdminConfiguration(bootstrapServers: consumerConfiguration.bootstrapServers)
        adminConfiguration.extra = consumerConfiguration.extra
        let admin = try KafkaAdmin(configuration: adminConfiguration)
        let partitionCount = try await admin.describeTopic(topic).partitionCount
        let consumer = try KafkaConsumer(configuration: consumerConfiguration, logger: logger)
        do {
            let newest = try await read(topic: topic, partitionCount: partitionCount, consumer: consumer, summary: &summary)
            try? await consumer.close()
            return newest
        } catch {
            try? await consumer.close()
            throw error
        }
    }

    private func read(topic: String, partitionCount: Int, consumer: KafkaConsumer, summary: inout Summary) async throws
        -> [String: Newest]
    {
        var remaining: [Int32: Int64] = [:]
        var starts: [KafkaTopicPartitionOffset] = []
        for partition in 0..<Int32(partitionCount) {
            let marks = try await consumer.queryWatermarkOffsets(topic: topic, partition: partition)
            if marks.high > marks.low {
                remaining[partition] = marks.high
                starts.append(KafkaTopicPartitionOffset(topic: topic, partition: partition, offset: marks.low))
            }
        }
        var newest: [String: Newest] = [:]
        guard !starts.isEmpty else { return newest }
        try consumer.assign(starts)
        var idlePolls = 0
        // As a reindex reads: past every high watermark and until quiet (Tansu's watermark can
        // undercount the last batch), giving up on a partition after ten empty polls.
        while true {
            let batch = try await consumer.pollBatch(maxMessages: 5_000, timeout: .seconds(1))
            if batch.isEmpty {
                if remaining.isEmpty { break }
                idlePolls += 1
                if idlePolls >= 10 {
                    logger.warning(
                        "purge stopped waiting for partitions whose last offsets never arrived",
                        metadata: ["partitions": "\(remaining.keys.sorted())"])
                    break
                }
                continue
            }
            idlePolls = 0
            summary.recordsRead += batch.count
            for message in batch {
                if let last = remaining[message.partition], message.offset + 1 >= last { remaining[message.partition] = nil }
                // A record another tool wrote badly is the reindex's to report; here it names no device.
                guard let record = try? RegistryRecord(message: message), record.hub == hub else { continue }
                let key = record.change.recordKey
                if let known = newest[key], known.version > record.change.version { continue }
                newest[key] = Newest(version: record.change.version, change: record.change)
            }
        }
        return newest
    }
}
