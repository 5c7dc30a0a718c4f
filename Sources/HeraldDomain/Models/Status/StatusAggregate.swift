import Foundation

/// Folds the ``TaskProgress`` records of one event into its ``StatusRecord``.
///
/// Idempotent per task: a task's progress is counted once however often it arrives
/// (a retried transaction, a re-read topic, a broker that shows aborted records), so
/// the summary stays right under at-least-once delivery of progress records.
/// `Codable`, so the status role can keep it in a compacted topic or Redis and resume.
public struct StatusAggregate: Sendable, Hashable, Codable {
    public private(set) var record: StatusRecord
    /// Indexes of the tasks already counted.
    public private(set) var finishedTasks: Set<Int>

    /// The latest `finishedAt` among counted tasks; becomes `completedAt` when the last one reports.
    private var latestFinish: Date?
    /// Counted tasks that the event's stop cut short (nil: none).
    private var stoppedTasks: Int?

    /// Starts from the planner's `accepted` record. An event planned with no tasks (an
    /// audience that is empty in every slot) is complete at once.
    public init(accepted record: StatusRecord) {
        self.record = record
        self.finishedTasks = []
        if record.state == .accepted, record.tasks.planned == 0 {
            complete(at: record.timings.acceptedAt)
        }
    }

    public init(eventId: String, taskCount: Int, publishedAt: Date?, acceptedAt: Date) {
        self.init(accepted: .accepted(eventId: eventId, taskCount: taskCount, publishedAt: publishedAt, acceptedAt: acceptedAt))
    }

    /// Whether every planned task has reported (the event completed, or was stopped in flight).
    public var isComplete: Bool {
        record.state == .completed || (record.state == .cancelled && finishedTasks.count == record.tasks.planned)
    }

    /// Outcome of ``apply(_:)``.
    public enum Outcome: Sendable, Hashable {
        /// Counted; the record changed.
        case counted
        /// This task was counted before; nothing changed.
        case duplicate
        /// Not for this aggregate (another event, an index outside the plan, a different
        /// task count) or the record is already final; nothing changed.
        case ignored
    }

    /// Counts `progress` unless it was counted before or does not belong here.
    @discardableResult
    public mutating func apply(_ progress: TaskProgress) -> Outcome {
        guard progress.eventId == record.eventId,
            progress.taskCount == record.tasks.planned,
            (0..<record.tasks.planned).contains(progress.taskIndex)
        else { return .ignored }
        guard !finishedTasks.contains(progress.taskIndex) else { return .duplicate }
        guard !record.state.isTerminal else { return .ignored }

        finishedTasks.insert(progress.taskIndex)
        if progress.stopped { stoppedTasks = (stoppedTasks ?? 0) + 1 }
        record.tasks.completed = finishedTasks.count
        record.targets.merge(progress.delivered)
        record.skipped += progress.skipped
        record.failed += progress.failed
        if !progress.plans.isEmpty { record.plans = (record.plans ?? [:]).merging(progress.plans, uniquingKeysWith: +) }
        if let first = progress.firstDeliveryAt {
            record.timings.firstDeliveryAt = min(record.timings.firstDeliveryAt ?? first, first)
        }
        let latest = max(latestFinish ?? progress.finishedAt, progress.finishedAt)
        latestFinish = latest
        if finishedTasks.count == record.tasks.planned {
            complete(at: latest)
        } else {
            record.state = .processing
        }
        return .counted
    }

    private mutating func complete(at completedAt: Date) {
        record.state = .completed
        if let stoppedTasks {
            record.state = .cancelled
            record.reason = StatusRecord.stoppedReason(tasks: stoppedTasks, of: record.tasks.planned)
        }
        record.timings.completedAt = completedAt
        let start = record.timings.publishedAt ?? record.timings.acceptedAt
        record.timings.durationMs = ISO8601Timestamp.milliseconds(completedAt) - ISO8601Timestamp.milliseconds(start)
    }
}

/// How many deliveries, in total and broken down by platform and by template name
/// (``DeliveryRecord/nativeTemplateName`` for native registrations).
public struct DeliveryCounts: Sendable, Hashable, Codable {
    public var total: Int
    public var byPlatform: [String: Int]
    public var byTemplate: [String: Int]

    public init(total: Int = 0, byPlatform: [String: Int] = [:], byTemplate: [String: Int] = [:]) {
        self.total = total
        self.byPlatform = byPlatform
        self.byTemplate = byTemplate
    }

    /// Counts one delivery.
    public mutating func add(platform: Platform, template: String) {
        total += 1
        byPlatform[platform.rawValue, default: 0] += 1
        byTemplate[template, default: 0] += 1
    }

    /// Adds `other`'s counts to these.
    public mutating func merge(_ other: DeliveryCounts) {
        total += other.total
        byPlatform.merge(other.byPlatform, uniquingKeysWith: +)
        byTemplate.merge(other.byTemplate, uniquingKeysWith: +)
    }
}
