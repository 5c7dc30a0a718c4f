import Foundation

/// What one fan-out task did, emitted in the same transaction as its deliveries. The
/// status of an event is the fold of its tasks' progress (see ``StatusAggregate``).
public struct TaskProgress: Sendable, Hashable {
    public var eventId: String
    public var taskIndex: Int
    public var taskCount: Int
    public var delivered: DeliveryCounts
    public var skipped: Int
    public var failed: Int
    public var startedAt: Date
    public var finishedAt: Date
    /// When this task emitted its first delivery; `nil` if it emitted none.
    public var firstDeliveryAt: Date?
    /// `skipped` by reason (`payload_too_large`, `no_native_payload`, `registration_expired`, ...).
    public var skippedReasons: [String: Int] = [:]
    /// Slots by the fan-out plan that resolved them (`FanoutPlanKind`: `broadcast`, `bits`, `scan`, `sets`).
    public var plans: [String: Int] = [:]
    /// The event was stopped while this task ran (`DELETE /v1/notifications/{id}`): it wrote
    /// what `delivered` counts and no more.
    public var stopped = false

    public init(
        eventId: String, taskIndex: Int, taskCount: Int, delivered: DeliveryCounts = DeliveryCounts(),
        skipped: Int = 0, failed: Int = 0, startedAt: Date, finishedAt: Date, firstDeliveryAt: Date? = nil
    ) {
        self.eventId = eventId
        self.taskIndex = taskIndex
        self.taskCount = taskCount
        self.delivered = delivered
        self.skipped = skipped
        self.failed = failed
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.firstDeliveryAt = firstDeliveryAt
    }
}

extension TaskProgress: Codable {
    enum CodingKeys: String, CodingKey {
        case eventId, taskIndex, taskCount, delivered, skipped, failed, startedAt, finishedAt, firstDeliveryAt, skippedReasons, plans
        case stopped
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        eventId = try container.decode(String.self, forKey: .eventId)
        taskIndex = try container.decode(Int.self, forKey: .taskIndex)
        taskCount = try container.decode(Int.self, forKey: .taskCount)
        delivered = try container.decode(DeliveryCounts.self, forKey: .delivered)
        skipped = try container.decodeIfPresent(Int.self, forKey: .skipped) ?? 0
        failed = try container.decodeIfPresent(Int.self, forKey: .failed) ?? 0
        startedAt = try container.decodeTimestamp(forKey: .startedAt)
        finishedAt = try container.decodeTimestamp(forKey: .finishedAt)
        firstDeliveryAt = try container.decodeTimestampIfPresent(forKey: .firstDeliveryAt)
        skippedReasons = try container.decodeIfPresent([String: Int].self, forKey: .skippedReasons) ?? [:]
        plans = try container.decodeIfPresent([String: Int].self, forKey: .plans) ?? [:]
        stopped = try container.decodeIfPresent(Bool.self, forKey: .stopped) ?? false
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(eventId, forKey: .eventId)
        try container.encode(taskIndex, forKey: .taskIndex)
        try container.encode(taskCount, forKey: .taskCount)
        try container.encode(delivered, forKey: .delivered)
        try container.encode(skipped, forKey: .skipped)
        try container.encode(failed, forKey: .failed)
        try container.encodeTimestamp(startedAt, forKey: .startedAt)
        try container.encodeTimestamp(finishedAt, forKey: .finishedAt)
        try container.encodeTimestamp(firstDeliveryAt, forKey: .firstDeliveryAt)
        if !skippedReasons.isEmpty { try container.encode(skippedReasons, forKey: .skippedReasons) }
        if !plans.isEmpty { try container.encode(plans, forKey: .plans) }
        if stopped { try container.encode(true, forKey: .stopped) }
    }
}
