import Foundation

/// One unit of fan-out work on `herald.tasks`: resolve the event's audience inside a
/// contiguous range of Redis slots and deliver to it. The validated event travels inside
/// the task, so a fan-out worker needs no lookup before it starts.
public struct FanoutTask: Sendable, Hashable, Codable {
    public var eventId: String
    /// This task's position among the event's tasks, `0..<taskCount`.
    public var taskIndex: Int
    public var taskCount: Int
    /// Redis slots this task covers: `slotLower` up to but not including `slotUpper`.
    public var slotLower: Int
    public var slotUpper: Int
    public var event: NotificationEvent
    public var plannedAt: Date
    /// A rehearsal's task (`DerivedSend.rehearsal`): resolved, counted and rendered once per
    /// template like any task, but it writes no delivery.
    public var rehearsal = false
    /// A correction's task (`DerivedSend.correction`): its audience is the registrations the
    /// corrected event reached, read from its records on this partition of `herald.deliveries`.
    public var correction: CorrectionSource?
    /// The frequency caps of the event's hub when it was planned (nil: none): the task skips a
    /// device the rules that apply to the event's urgency cap (`capped`), and records the
    /// devices it delivers to, so later events count them.
    public var frequencyCaps: [FrequencyCap]?
    /// The event's hub holds breaking alerts in quiet hours too (`HubDefinition.quietHoursHoldBreaking`).
    public var quietHoursHoldBreaking = false
    /// The event's hub's largest payload when it was planned (`HubLimits.maxPayloadBytes`; nil:
    /// the platforms' own): a rendition over it is skipped `payload_too_large`.
    public var maxPayloadBytes: Int?

    /// Where a correction's task finds the corrected event's deliveries.
    public struct CorrectionSource: Sendable, Hashable, Codable {
        /// The partition of `herald.deliveries` this task reads.
        public var partition: Int32
        /// When the corrected event was accepted: none of its records is older.
        public var since: Date

        public init(partition: Int32, since: Date) {
            self.partition = partition
            self.since = since
        }

        enum CodingKeys: String, CodingKey { case partition, since }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            partition = try container.decode(Int32.self, forKey: .partition)
            since = try container.decodeTimestamp(forKey: .since)
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(partition, forKey: .partition)
            try container.encodeTimestamp(since, forKey: .since)
        }
    }

    public init(eventId: String, taskIndex: Int, taskCount: Int, slots: Range<Int>, event: NotificationEvent, plannedAt: Date) {
        self.eventId = eventId
        self.taskIndex = taskIndex
        self.taskCount = taskCount
        self.slotLower = slots.lowerBound
        self.slotUpper = slots.upperBound
        self.event = event
        self.plannedAt = plannedAt
    }

    /// The slots as a range.
    public var slots: Range<Int> {
        get { slotLower..<max(slotLower, slotUpper) }
        set {
            slotLower = newValue.lowerBound
            slotUpper = newValue.upperBound
        }
    }

    enum CodingKeys: String, CodingKey {
        case eventId, taskIndex, taskCount, slotLower, slotUpper, event, plannedAt, rehearsal, correction, frequencyCaps,
            quietHoursHoldBreaking, maxPayloadBytes
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        eventId = try container.decode(String.self, forKey: .eventId)
        taskIndex = try container.decode(Int.self, forKey: .taskIndex)
        taskCount = try container.decode(Int.self, forKey: .taskCount)
        slotLower = try container.decode(Int.self, forKey: .slotLower)
        slotUpper = try container.decode(Int.self, forKey: .slotUpper)
        event = try container.decode(NotificationEvent.self, forKey: .event)
        plannedAt = try container.decodeTimestamp(forKey: .plannedAt)
        rehearsal = try container.decodeIfPresent(Bool.self, forKey: .rehearsal) ?? false
        correction = try container.decodeIfPresent(CorrectionSource.self, forKey: .correction)
        frequencyCaps = try container.decodeIfPresent([FrequencyCap].self, forKey: .frequencyCaps)
        quietHoursHoldBreaking = try container.decodeIfPresent(Bool.self, forKey: .quietHoursHoldBreaking) ?? false
        maxPayloadBytes = try container.decodeIfPresent(Int.self, forKey: .maxPayloadBytes)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(eventId, forKey: .eventId)
        try container.encode(taskIndex, forKey: .taskIndex)
        try container.encode(taskCount, forKey: .taskCount)
        try container.encode(slotLower, forKey: .slotLower)
        try container.encode(slotUpper, forKey: .slotUpper)
        try container.encode(event, forKey: .event)
        try container.encodeTimestamp(plannedAt, forKey: .plannedAt)
        if rehearsal { try container.encode(true, forKey: .rehearsal) }
        try container.encodeIfPresent(correction, forKey: .correction)
        try container.encodeIfPresent(frequencyCaps, forKey: .frequencyCaps)
        if quietHoursHoldBreaking { try container.encode(true, forKey: .quietHoursHoldBreaking) }
        try container.encodeIfPresent(maxPayloadBytes, forKey: .maxPayloadBytes)
    }
}
