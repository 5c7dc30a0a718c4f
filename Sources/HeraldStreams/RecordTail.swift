import Foundation
import HeraldDomain
import HeraldKafka
import Logging

/// Reads `herald.deliveries` or `herald.status` for `herald tail`: committed records only,
/// from the beginning or the end, optionally only one event's, either following new records
/// or stopping once it has caught up with what the topic held when it started.
///
/// It reads without a consumer group (assigning every partition), so tailing never moves
/// the offsets of a real consumer.
public struct RecordTail: Sendable {
    public enum Start: Sendable, Hashable {
        case beginning
        case end
    }

    public var topic: String
    public var bootstrapServers: String
    public var start: Start = .beginning
    /// Only records of this event: status records are keyed by it, delivery records carry it.
    public var eventId: String?
    /// Keep waiting for new records instead of stopping at the end.
    public var follow: Bool = false
    /// Called once, while following, when the records the topic held at the start have all
    /// been read (a follower's "caught up").
    public var onCaughtUp: (@Sendable () -> Void)?
    public var extra: [String: String] = [:]
    /// The longest an idle fetch waits while following (`follow`). Apache Kafka answers as soon
    /// as a record arrives, so a long wait costs no latency there and keeps an idle follower
    /// cheap; the embedded broker answers only when the wait ends.
    public var followFetchWaitMaxMs = 500

    public init(topic: String, bootstrapServers: String) {
        self.topic = topic
        self.bootstrapServers = bootstrapServers
    }

    /// The records, in order per partition. Ends at the high watermarks seen at start
    /// unless `follow` is set; cancel the consuming task to stop following.
    public func records(logger: Logger = Logger(label: "herald.tail")) -> AsyncThrowingStream<KafkaMessage, any Error> {
        let settings = self
        return AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    try await settings.read(logger: logger) { continuation.yield($0) }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Whether `message` belongs to `eventId` (always true without a filter).
    public func matches(_ message: KafkaMessage) -> Bool {
        guard let eventId else { return true }
        if let key = message.key, key.elementsEqual(eventId.utf8) { return true }
        guard let value = message.value else { return false }
        var needle = Array(#""eventId":""#.utf8)
        Array(eventId.utf8).withUnsafeBufferPointer { JSONEscaping.append($0, to: &needle) }
        needle.append(UInt8(ascii: "\""))
        return Self.contains(value, needle)
    }

    private func read(logger: Logger, _ yield: (KafkaMessage) -> Void) async throws {
        var adminConfiguration = KafkaAdminConfiguration(bootstrapServers: bootstrapServers)
        adminConfiguration.extra = extra
        let admin = try KafkaAdmin(configuration: adminConfiguration, logger: logger)
        let partitionCount = try await admin.describeTopic(topic).partitionCount
        // librdkafka wants a group id even for a consumer that only assigns; this one never
        // subscribes or commits, so the group stays empty.
        var consumerConfiguration = KafkaConsumerConfiguration(
            bootstrapServers: bootstrapServers, groupId: "herald-tail-\(UUID().uuidString.prefix(8).lowercased())"
        )
        consumerConfiguration.clientId = "herald-tail"
        if follow { consumerConfiguration.fetchWaitMaxMs = followFetchWaitMaxMs }
        consumerConfiguration.isolationLevel = .readCommitted
        consumerConfiguration.extra = extra
        let consumer = try KafkaConsumer(configuration: consumerConfiguration, logger: logger)
        do {
            try await read(consumer, partitionCount: partitionCount, yield)
        } catch {
            try? await consumer.close()
            throw error
        }
        try? await consumer.close()
    }

    private func read(_ consumer: KafkaConsumer, partitionCount: Int, _ yield: (KafkaMessage) -> Void) async throws {
        let partitions = (0..<Int32(partitionCount)).map { KafkaTopicPartition(topic: topic, partition: $0) }
        var ends: [KafkaTopicPartition: Int64] = [:]
        for partition in partitions {
            ends[partition] = try await consumer.queryWatermarkOffsets(topic: topic, partition: partition.partition).high
        }
        let startOffset = start == .beginning ? KafkaTopicPartitionOffset.beginning : KafkaTopicPartitionOffset.end
        try consumer.assign(partitions.map { KafkaTopicPartitionOffset(topic: topic, partition: $0.partition, offset: startOffset) })
        if start == .end && !follow { return }

        var idlePolls = 0
        var reportedCaughtUp = false
        while !Task.isCancelled {
            // A record ends a wait at once: the timeout matters to an idle tail only, which
            // counts quiet polls until it has caught up and then, following, just waits.
            let following = follow && (reportedCaughtUp || onCaughtUp == nil)
            let batch = try await consumer.pollBatch(maxMessages: 500, timeout: following ? .seconds(1) : .milliseconds(250))
            for message in batch where matches(message) { yield(message) }
            idlePolls = batch.isEmpty ? idlePolls + 1 : 0
            if following { continue }
            // Caught up once every partition's position passed the high watermark seen at
            // start; transaction markers occupy offsets but are never returned, so compare
            // positions, not the last record's offset.
            let positions = (try? consumer.position(partitions)) ?? []
            let caughtUp =
                !positions.isEmpty
                && positions.allSatisfy { position in
                    let end = ends[position.topicPartition] ?? 0
                    return end == 0 || (position.isValid && position.offset >= end)
                }
            // Also stop after a long quiet while: an open transaction of a dead producer can
            // hold the last stable offset below the high watermark until the broker aborts it.
            // Caught up also needs two quiet polls: Tansu's ListOffsets reports the base offset
            // of the last batch, so the queried watermark can be short of the real end.
            if (caughtUp && idlePolls >= 2) || idlePolls >= 40 {
                guard follow else { return }
                reportedCaughtUp = true
                onCaughtUp?()
            }
        }
    }

    /// Whether `needle` occurs in `haystack` (an empty needle always does).
    public static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, haystack.count >= needle.count else { return needle.isEmpty }
        return haystack.withUnsafeBufferPointer { hay in
            needle.withUnsafeBufferPointer { pin in
                let first = pin[0]
                let last = hay.count - pin.count
                var index = 0
                while index <= last {
                    if hay[index] == first && memcmp(hay.baseAddress! + index, pin.baseAddress!, pin.count) == 0 { return true }
                    index += 1
                }
                return false
            }
        }
    }
}
