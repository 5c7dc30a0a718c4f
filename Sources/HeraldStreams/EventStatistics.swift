import Foundation
import HeraldDomain

/// What analysts ask of the log about each event, folded from `herald.status` and
/// `herald.deliveries` (never from Redis): its final status, its deliveries by platform and by
/// template, its skips by reason, and how long deliveries took from publishing to rendering.
///
/// Feed it records in log order; a task retried after a crash reports its progress again,
/// and only its last report counts.
public struct EventStatistics: Sendable {
    public struct Event: Sendable, Hashable, Codable {
        public var eventId: String
        public var state: String
        public var tasksPlanned: Int
        public var tasksCompleted: Int
        public var deliveredByStatus: Int
        public var byPlatform: [String: Int]
        public var byTemplate: [String: Int]
        public var skipped: Int
        public var skippedByReason: [String: Int]
        public var failed: Int
        public var durationMs: Int64?
        /// Delivery records read back from the deliveries topic (0 when not read).
        public var deliveryRecords: Int
        /// Publish-to-render latency of those records, in milliseconds.
        public var latencyMs: Percentiles?
    }

    public struct Percentiles: Sendable, Hashable, Codable {
        public var p50: Double
        public var p90: Double
        public var p99: Double
        public var max: Double

        /// Nearest-rank percentiles of `samples` (nil when empty).
        public init?(_ samples: [Double]) {
            guard !samples.isEmpty else { return nil }
            let sorted = samples.sorted()
            func rank(_ q: Double) -> Double {
                sorted[Swift.min(sorted.count - 1, Swift.max(0, Int((q * Double(sorted.count)).rounded(.up)) - 1))]
            }
            p50 = rank(0.50)
            p90 = rank(0.90)
            p99 = rank(0.99)
            max = sorted[sorted.count - 1]
        }
    }

    private var statuses: [String: StatusRecord] = [:]
    private var progress: [String: [Int: TaskProgress]] = [:]
    private var deliveries: [String: (count: Int, latencies: [Double])] = [:]

    public init() {}

    /// Reads `topics.status` (and `topics.deliveries` when `deliveries` is set) up to their
    /// ends, with read_committed, only `eventId`'s records when given.
    public static func read(
        topics: HeraldTopics, bootstrapServers: String, extra: [String: String] = [:], eventId: String? = nil, deliveries: Bool = true
    ) async throws -> EventStatistics {
        var statistics = EventStatistics()
        var statusTail = RecordTail(topic: topics.status, bootstrapServers: bootstrapServers)
        statusTail.extra = extra
        statusTail.eventId = eventId
        for try await message in statusTail.records() {
            switch StatusCoding.decode(message) {
            case .progress(let progress): statistics.add(progress: progress)
            case .status(let status): statistics.add(status: status)
            case nil: break
            }
        }
        if deliveries {
            var deliveryTail = RecordTail(topic: topics.deliveries, bootstrapServers: bootstrapServers)
            deliveryTail.extra = extra
            deliveryTail.eventId = eventId
            for try await message in deliveryTail.records() {
                if let value = message.value, let record = try? DeliveryRecord.decode(value) { statistics.add(delivery: record) }
            }
        }
        return statistics
    }

    public mutating func add(status record: StatusRecord) {
        statuses[record.eventId] = StatusRecord.fold(statuses[record.eventId], record)
    }

    public mutating func add(progress record: TaskProgress) {
        progress[record.eventId, default: [:]][record.taskIndex] = record
    }

    public mutating func add(delivery record: DeliveryRecord) {
        var entry = deliveries[record.eventId] ?? (0, [])
        entry.count += 1
        if let published = record.publishedAt {
            entry.latencies.append(record.renderedAt.timeIntervalSince(published) * 1_000)
        }
        deliveries[record.eventId] = entry
    }

    /// One line per event with a status, in event id order.
    public func events() -> [Event] {
        statuses.keys.sorted().map { id in
            let status = statuses[id]!
            var reasons: [String: Int] = [:]
            for task in (progress[id] ?? [:]).values {
                for (reason, count) in task.skippedReasons { reasons[reason, default: 0] += count }
            }
            let read = deliveries[id]
            return Event(
                eventId: id, state: status.state.rawValue, tasksPlanned: status.tasks.planned, tasksCompleted: status.tasks.completed,
                deliveredByStatus: status.targets.total, byPlatform: status.targets.byPlatform, byTemplate: status.targets.byTemplate,
                skipped: status.skipped, skippedByReason: reasons, failed: status.failed, durationMs: status.timings.durationMs,
                deliveryRecords: read?.count ?? 0, latencyMs: read.flatMap { Percentiles($0.latencies) }
            )
        }
    }
}
