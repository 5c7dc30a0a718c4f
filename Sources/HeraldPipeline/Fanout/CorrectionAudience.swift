import Foundation
import HeraldDomain
import HeraldKafka
import HeraldRedis
import HeraldRegistry
import HeraldStreams
import Logging

/// Who a correction goes to: the registrations the original event reached, read from the
/// original's records on one partition of `herald.deliveries` (a correction has one task per
/// partition), less those whose receipt says the push was never sent.
///
/// The read is bounded by time: it starts at the first record written at or after the
/// original was accepted (less ``clockAllowance``, for the writers' clocks) and stops once it
/// has caught up with the partition, or at a record written after the correction was planned
/// (plus the allowance): the original had completed by then, so none of its records can come
/// later. `read_committed`, so a delivery of an aborted attempt is not counted (on brokers that
/// hide aborted records; on Tansu a repeat has the same registration id and counts once).
struct CorrectionAudience: Sendable {
    /// Registration ids, each once.
    var registrations: Set<String> = []
    /// Deliveries left out because their receipt said they were not sent.
    var unsent = 0

    static let clockAllowance: TimeInterval = 30

    /// Reads the original's deliveries on `partition`.
    ///
    /// - Parameters:
    ///   - original: the corrected event's id (in `hub`).
    ///   - since: when the original was accepted.
    ///   - until: when the correction was planned.
    static func read(
        original: String, hub: HubName, partition: Int32, since: Date, until: Date, configuration: PipelineConfiguration,
        logger: Logger
    ) async throws -> CorrectionAudience {
        let topic = configuration.topics.deliveries
        var consumerConfiguration = configuration.directReadConfiguration(lane: "correction")
        consumerConfiguration.queuedMinMessages = 10_000
        consumerConfiguration.fetchWaitMaxMs = 100
        let consumer = try KafkaConsumer(configuration: consumerConfiguration, logger: logger)
        do {
            let audience = try await read(
                consumer, topic: topic, original: original, hub: hub, partition: partition, since: since, until: until)
            try? await consumer.close()
            return audience
        } catch {
            try? await consumer.close()
            throw error
        }
    }

    private static func read(
        _ consumer: KafkaConsumer, topic: String, original: String, hub: HubName, partition: Int32, since: Date, until: Date
    ) async throws -> CorrectionAudience {
        var audience = CorrectionAudience()
        let start = try await consumer.offsets(topic: topic, partitions: [partition], at: since - clockAllowance).first
        let end = try await consumer.queryWatermarkOffsets(topic: topic, partition: partition).high
        guard let start, end > 0, start.offset != KafkaTopicPartitionOffset.end else { return audience }
        try consumer.assign([KafkaTopicPartitionOffset(topic: topic, partition: partition, offset: max(0, start.offset))])
        let matcher = Matcher(eventId: original, hub: hub)
        let last = until + clockAllowance
        let place = [KafkaTopicPartition(topic: topic, partition: partition)]
        var quiet = 0
        while true {
            try Task.checkCancellation()
            let batch = try await consumer.pollBatch(maxMessages: 5_000, timeout: .milliseconds(250))
            var pastTheEnd = false
            for message in batch {
                if let written = message.timestamp, written > last {
                    pastTheEnd = true
                    break
                }
                if let value = message.value, let key = message.key, matcher.matches(value) {
                    audience.registrations.insert(String(decoding: key, as: UTF8.self))
                }
            }
            if pastTheEnd { break }
            quiet = batch.isEmpty ? quiet + 1 : 0
            // Caught up: the position passed the end seen at the start and a poll came back
            // empty (Tansu's end can be short of the real one by its last batch), or a long quiet
            // while (an open transaction of a dead writer holding the stable offset back).
            let position = try consumer.position(place).first
            let passed = position.map { $0.isValid && $0.offset >= end } ?? false
            if (passed && quiet >= 1) || quiet >= 40 { break }
        }
        return audience
    }

    /// Leaves out the deliveries whose receipt was not `sent` (the sender's unsent set of the
    /// original; delivery ids `<original>/<registration>/<template>`).
    mutating func removeUnsent(_ deliveryIds: [String], original: String) {
        let prefix = original + "/"
        for deliveryId in deliveryIds where deliveryId.hasPrefix(prefix) {
            let rest = deliveryId.dropFirst(prefix.count)
            guard let slash = rest.firstIndex(of: "/") else { continue }
            if registrations.remove(String(rest[..<slash])) != nil { unsent += 1 }
        }
    }

    /// Finds the records of one event in the record layout the fan-out writes
    /// (`DeliveryRecord.Frame`): a hub other than the default comes first as `"hub":"<hub>"`,
    /// and the event id is followed by the registration id.
    struct Matcher {
        let needle: [UInt8]
        let hubPrefix: [UInt8]?
        /// How a record of any hub other than the default starts.
        static let anyHub = Array(#"{"hub":"#.utf8)

        init(eventId: String, hub: HubName) {
            var needle = Array(#""eventId":""#.utf8)
            Array(eventId.utf8).withUnsafeBufferPointer { JSONEscaping.append($0, to: &needle) }
            needle += Array(#"","registrationId":""#.utf8)
            self.needle = needle
            if hub.isDefault {
                hubPrefix = nil
            } else {
                var prefix = Array(#"{"hub":""#.utf8)
                Array(hub.rawValue.utf8).withUnsafeBufferPointer { JSONEscaping.append($0, to: &prefix) }
                prefix += Array(#"","#.utf8)
                hubPrefix = prefix
            }
        }

        func matches(_ value: [UInt8]) -> Bool {
            if let hubPrefix {
                guard value.starts(with: hubPrefix) else { return false }
            } else if value.starts(with: Self.anyHub) {
                return false
            }
            return RecordTail.contains(value, needle)
        }
    }
}
