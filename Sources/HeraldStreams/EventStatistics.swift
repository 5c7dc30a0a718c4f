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
        /// Final push receipts read back from the receipts topic, by platform and outcome
        /// (`sent`, `rejected`, `unregistered`, `expired`, `failed`, `cancelled`); empty when not read.
        public var pushed: [String: [String: Int]]
        /// Publish-to-pushed latency of the `sent` receipts (from the event's publish to the
        /// sender's decision), in milliseconds.
        public var pushedLatencyMs: Percentiles?
        /// How fast the event reached its audience: its deliveries committed (each task's at the
        /// time it finished) and their receipts `sent`, against the deliveries its status counts.
        public var reach: Reach?
        /// What readers did with it, from `herald.engagements` (each device and action once):
        /// opens and dismissals by platform and template, the open rate over the `sent`
        /// receipts, the median time from the publish to an open.
        public var engagement: EngagementFunnel?

        /// Receipts that did not reach the device's service: every outcome but `sent`.
        public var pushFailures: Int {
            pushed.values.reduce(0) { total, outcomes in total + outcomes.filter { $0.key != "sent" }.values.reduce(0, +) }
        }
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
    private var receipts: [String: (outcomes: [String: [String: Int]], latencies: [Double])] = [:]
    /// The latest engagement of each device and action, by event (as compaction keeps them).
    private var engagements: [String: [String: Engagement]] = [:]

    public init() {}

    /// Reads `topics.status` (and `topics.deliveries` when `deliveries` is set) up to their
    /// ends, with read_committed, only `eventId`'s records when given.
    public static func read(
        topics: HeraldTopics, bootstrapServers: String, extra: [String: String] = [:], eventId: String? = nil, deliveries: Bool = true,
        receipts: Bool = true
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
        if receipts {
            var engagementTail = RecordTail(topic: topics.engagements, bootstrapServers: bootstrapServers)
            engagementTail.extra = extra
            engagementTail.eventId = eventId
            for try await message in engagementTail.records() {
                if let value = message.value, let engagement = try? Engagement.decodeRecord(value) {
                    statistics.add(engagement: engagement)
                }
            }
            var receiptTail = RecordTail(topic: topics.receipts, bootstrapServers: bootstrapServers)
            receiptTail.extra = extra
            receiptTail.eventId = eventId
            let decoder = JSONDecoder()
            for try await message in receiptTail.records() {
                if let value = message.value, let receipt = try? decoder.decode(PushReceipt.self, from: Data(value)) {
                    statistics.add(receipt: receipt)
                }
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

    public mutating func add(receipt: PushReceipt) {
        var entry = receipts[receipt.eventId] ?? ([:], [])
        entry.outcomes[receipt.platform.rawValue, default: [:]][receipt.outcome.rawValue, default: 0] += 1
        if receipt.outcome == .sent, let published = statuses[receipt.eventId]?.timings.publishedAt {
            entry.latencies.append(receipt.decidedAt.timeIntervalSince(published) * 1_000)
        }
        receipts[receipt.eventId] = entry
    }

    public mutating func add(engagement: Engagement) {
        engagements[engagement.eventId, default: [:]]["\(engagement.action.rawValue)|\(engagement.device.id)"] = engagement
    }

    /// The funnel of an event's engagements against its `sent` receipts.
    func funnel(_ id: String, publishedAt: Date?) -> EngagementFunnel? {
        guard let reported = engagements[id]?.values, !reported.isEmpty else { return nil }
        var fields: [String: Int] = [:]
        for engagement in reported {
            for field in EngagementFunnel.fields(of: engagement, publishedAt: publishedAt) { fields[field, default: 0] += 1 }
        }
        let sent = receipts[id]?.outcomes.values.reduce(0) { $0 + ($1["sent"] ?? 0) } ?? 0
        return EngagementFunnel(fields: fields, sent: sent)
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
            let startMs = ISO8601Timestamp.milliseconds(status.timings.publishedAt ?? status.timings.acceptedAt)
            let committed = ReachCurve(
                points: (progress[id] ?? [:]).values.map { (ISO8601Timestamp.milliseconds($0.finishedAt) - startMs, $0.delivered.total) },
                total: status.targets.total)
            let sent = ReachCurve(points: (receipts[id]?.latencies ?? []).map { (Int64($0.rounded()), 1) }, total: status.targets.total)
            var event = Event(
                eventId: id, state: status.state.rawValue, tasksPlanned: status.tasks.planned, tasksCompleted: status.tasks.completed,
                deliveredByStatus: status.targets.total, byPlatform: status.targets.byPlatform, byTemplate: status.targets.byTemplate,
                skipped: status.skipped, skippedByReason: reasons, failed: status.failed, durationMs: status.timings.durationMs,
                deliveryRecords: read?.count ?? 0, latencyMs: read.flatMap { Percentiles($0.latencies) },
                pushed: receipts[id]?.outcomes ?? [:], pushedLatencyMs: receipts[id].flatMap { Percentiles($0.latencies) }
            )
            if committed != nil || sent != nil { event.reach = Reach(committed: committed, sent: sent) }
            event.engagement = funnel(id, publishedAt: status.timings.publishedAt ?? status.timings.acceptedAt)
            return event
        }
    }
}
