import Foundation

/// A value of the compacted `herald.scheduled` topic (key: the event id): a schedule with its
/// releases, or a request to cancel one. The latest record of an id is its truth; a tombstone
/// (no value) means nothing is pending for it any more.
public enum ScheduleRecord: Sendable, Hashable {
    case schedule(ScheduledEvent)
    case cancel(eventId: String, requestedAt: Date)

    public var eventId: String {
        switch self {
        case .schedule(let scheduled): scheduled.eventId
        case .cancel(let eventId, _): eventId
        }
    }
}

/// An event waiting for its releases, as the planner accepted it.
public struct ScheduledEvent: Sendable, Hashable, Codable {
    public var eventId: String
    /// The event as published, with its `sendAt` or `sendAtLocal`.
    public var event: NotificationEvent
    /// When the planner accepted it.
    public var scheduledAt: Date
    /// In release order; each `pending` until released or cancelled.
    public var releases: [ScheduledRelease]
    /// The planner's de-duplication claim of the record that scheduled it
    /// (`<partition>:<offset>:<fingerprint>`), handed over to the record that releases it.
    public var claim: String
    /// 1 when the planner accepted it, one more with every change the scheduler makes: a
    /// record read again (a replay, a rebuild) never replaces a newer one.
    public var revision: Int

    public init(
        eventId: String, event: NotificationEvent, scheduledAt: Date, releases: [ScheduledRelease], claim: String = "", revision: Int = 1
    ) {
        self.revision = revision
        self.eventId = eventId
        self.event = event
        self.scheduledAt = scheduledAt
        self.releases = releases
        self.claim = claim
    }

    /// The schedule's key on `herald.scheduled` and in the scheduler's index: the event id in
    /// the default hub, `<hub>/<id>` in the others (event ids are unique within a hub).
    public var scheduleKey: String { event.hub.recordKey(eventId) }

    /// The releases still to come.
    public var pending: [ScheduledRelease] { releases.filter { $0.state == .pending } }

    /// When the next pending release falls due; nil when nothing is pending.
    public var nextReleaseAt: Date? { releases.nextPendingReleaseAt }

    /// The state of the schedule as a whole.
    public var state: StatusRecord.State {
        if releases.contains(where: { $0.state == .cancelled }) { return .cancelled }
        return releases.allSatisfy { $0.state == .released } ? .released : .scheduled
    }

    enum CodingKeys: String, CodingKey {
        case eventId, event, scheduledAt, releases, claim, revision
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        eventId = try container.decode(String.self, forKey: .eventId)
        event = try container.decode(NotificationEvent.self, forKey: .event)
        scheduledAt = try container.decodeTimestamp(forKey: .scheduledAt)
        releases = try container.decode([ScheduledRelease].self, forKey: .releases)
        claim = try container.decodeIfPresent(String.self, forKey: .claim) ?? ""
        revision = try container.decodeIfPresent(Int.self, forKey: .revision) ?? 1
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(eventId, forKey: .eventId)
        try container.encode(event, forKey: .event)
        try container.encodeTimestamp(scheduledAt, forKey: .scheduledAt)
        try container.encode(releases, forKey: .releases)
        try container.encode(claim, forKey: .claim)
        try container.encode(revision, forKey: .revision)
    }
}

extension ScheduleRecord: Codable {
    enum CodingKeys: String, CodingKey {
        case eventId, cancel
    }

    enum CancelKeys: String, CodingKey {
        case requestedAt
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if container.contains(.cancel) {
            let cancel = try container.nestedContainer(keyedBy: CancelKeys.self, forKey: .cancel)
            self = .cancel(
                eventId: try container.decode(String.self, forKey: .eventId), requestedAt: try cancel.decodeTimestamp(forKey: .requestedAt))
        } else {
            self = .schedule(try ScheduledEvent(from: decoder))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .schedule(let scheduled):
            try scheduled.encode(to: encoder)
        case .cancel(let eventId, let requestedAt):
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(eventId, forKey: .eventId)
            var cancel = container.nestedContainer(keyedBy: CancelKeys.self, forKey: .cancel)
            try cancel.encodeTimestamp(requestedAt, forKey: .requestedAt)
        }
    }
}

extension Sequence where Element == ScheduledRelease {
    /// The earliest release still pending.
    public var nextPendingReleaseAt: Date? { lazy.filter { $0.state == .pending }.map(\.releaseAt).min() }
}
