import Foundation

/// Progress and final summary of one event: the value of `herald.status`, keyed by event
/// id, and the body of `GET /v1/notifications/{id}`.
public struct StatusRecord: Sendable, Hashable {
    public enum State: String, Sendable, Hashable, Codable, CaseIterable {
        /// Planned: tasks are on `herald.tasks`, none finished yet.
        case accepted
        /// Some tasks finished.
        case processing
        /// Every task finished.
        case completed
        /// Not fanned out because it was past `expiresAt` when planned.
        case expired
        /// Refused (invalid or duplicate); see ``StatusRecord/reason``.
        case rejected
        /// Waiting for its `sendAt` or `sendAtLocal` (``StatusRecord/schedule``).
        case scheduled
        /// Every release of the schedule went to `herald.events`; a `sendAt` event then goes on
        /// under the same id (`accepted`, ...), each part of a local-time one under its own.
        case released
        /// Cancelled before (the rest of) its releases; ``StatusRecord/schedule`` says which went.
        case cancelled

        /// Whether no further progress can change the record (a released `sendAt` event is
        /// planned next, under the same id, as a new start).
        public var isTerminal: Bool { self != .accepted && self != .processing && self != .scheduled }
    }

    /// A scheduled event's time and its releases, each `pending`, `released` or `cancelled`.
    public struct Schedule: Sendable, Hashable, Codable {
        public var sendAt: String?
        public var sendAtLocal: String?
        public var releases: [ScheduledRelease]

        public init(_ scheduled: ScheduledEvent) {
            switch scheduled.event.schedule {
            case .at(let instant): sendAt = ISO8601Timestamp.format(instant, precision: .secondsWhenExact)
            case .localTime(let local): sendAtLocal = local.description
            case nil: break
            }
            releases = scheduled.releases
        }
    }

    public struct Tasks: Sendable, Hashable, Codable {
        public var planned: Int
        public var completed: Int

        public init(planned: Int, completed: Int = 0) {
            self.planned = planned
            self.completed = completed
        }
    }

    public struct Timings: Sendable, Hashable {
        public var publishedAt: Date?
        public var acceptedAt: Date
        public var firstDeliveryAt: Date?
        public var completedAt: Date?
        /// From `publishedAt` (or `acceptedAt` when the publisher set none) to `completedAt`.
        public var durationMs: Int64?

        public init(
            publishedAt: Date? = nil, acceptedAt: Date, firstDeliveryAt: Date? = nil, completedAt: Date? = nil, durationMs: Int64? = nil
        ) {
            self.publishedAt = publishedAt
            self.acceptedAt = acceptedAt
            self.firstDeliveryAt = firstDeliveryAt
            self.completedAt = completedAt
            self.durationMs = durationMs
        }
    }

    /// The event's hub (absent in JSON: the default hub).
    public var hub: HubName
    public var eventId: String
    public var state: State
    /// Why the event was rejected or expired, in words.
    public var reason: String?
    public var tasks: Tasks
    /// Deliveries emitted, in total, by platform and by template.
    public var targets: DeliveryCounts
    /// Registrations in the audience with nothing to receive (for example a native
    /// registration when the event has no native payload for its platform).
    public var skipped: Int
    /// Registrations whose delivery could not be built (for example an unrenderable template).
    public var failed: Int
    public var timings: Timings
    /// Set while the event is (or was) scheduled: `scheduled`, `released`, `cancelled`.
    public var schedule: Schedule?
    /// The sender role's final receipts so far, by platform and outcome
    /// (`{"apns": {"sent": 2, "unregistered": 1}}`); nil until it has sent any. Read from the
    /// sender's counts, not carried by `herald.status` records.
    public var push: [String: [String: Int]]?
    /// How the fan-out found the audience: slots by plan (`{"scan": 30, "sets": 2}`,
    /// `FanoutPlanKind`), summed over the finished tasks; nil before any task reported one.
    public var plans: [String: Int]?
    /// `skipped` by reason (`payload_too_large`, `registration_expired`, ...), summed over the
    /// finished tasks; nil while none skipped any.
    public var skippedReasons: [String: Int]?
    /// The ids of the event's corrections (``DerivedSend/correction``), each with a status of
    /// its own; nil when it has none. Read from the store, not carried by `herald.status` records.
    public var corrections: [String]?
    /// How fast the event reached its audience (``Reach``): its deliveries committed, once its
    /// fan-out completed, and their receipts `sent` so far; nil before either is known.
    public var reach: Reach?
    /// What readers did with it, as their apps reported (``EngagementFunnel``); nil before any
    /// did. Read from the store, not carried by `herald.status` records.
    public var engagement: EngagementFunnel?

    public init(
        eventId: String, state: State, reason: String? = nil, tasks: Tasks, targets: DeliveryCounts = DeliveryCounts(),
        skipped: Int = 0, failed: Int = 0, timings: Timings, schedule: Schedule? = nil, hub: HubName = .default
    ) {
        self.hub = hub
        self.schedule = schedule
        self.eventId = eventId
        self.state = state
        self.reason = reason
        self.tasks = tasks
        self.targets = targets
        self.skipped = skipped
        self.failed = failed
        self.timings = timings
    }

    /// A test send's status (`testRecipients`; its id is a ``DerivedSend`` id): `"test": true` in JSON.
    public var isTest: Bool { DerivedSend.parse(eventId)?.kind == .test }
    /// A rehearsal's status (`dryRun`): `"rehearsal": true` in JSON; its counts are what the
    /// event would deliver, and nothing was delivered.
    public var isRehearsal: Bool { DerivedSend.parse(eventId)?.kind == .rehearsal }
    /// A correction's status: `"correctionOf": "<event id>"` in JSON.
    public var correctionOf: String? {
        DerivedSend.parse(eventId).flatMap { $0.kind == .correction ? $0.eventId : nil }
    }

    /// The receipts in `push`, whatever their outcome: below `targets.total` while the sender
    /// has deliveries of the event left (or runs nowhere).
    public var pushReceiptCount: Int { push?.values.reduce(0) { $0 + $1.values.reduce(0, +) } ?? 0 }

    /// The sender's counts hash (`<platform>:<outcome>` fields) as `push`; other fields
    /// (the offsets it counted) are left out.
    public static func pushCounts(fields: [String: Int]) -> [String: [String: Int]]? {
        var counts: [String: [String: Int]] = [:]
        for (field, count) in fields {
            let parts = field.split(separator: ":", maxSplits: 1).map(String.init)
            guard parts.count == 2, Platform(rawValue: parts[0]) != nil, PushOutcome(rawValue: parts[1]) != nil else { continue }
            counts[parts[0], default: [:]][parts[1]] = count
        }
        return counts.isEmpty ? nil : counts
    }

    /// The record the planner writes with the tasks.
    public static func accepted(
        eventId: String, taskCount: Int, publishedAt: Date?, acceptedAt: Date, hub: HubName = .default
    ) -> StatusRecord {
        StatusRecord(
            eventId: eventId, state: .accepted, tasks: Tasks(planned: taskCount),
            timings: Timings(publishedAt: publishedAt, acceptedAt: acceptedAt), hub: hub)
    }

    /// The record for an event that was already past `expiresAt` when planned.
    public static func expired(
        eventId: String, expiresAt: Date, publishedAt: Date?, at now: Date, hub: HubName = .default
    ) -> StatusRecord {
        StatusRecord(
            eventId: eventId, state: .expired,
            reason: "expired at \(ISO8601Timestamp.format(expiresAt, precision: .secondsWhenExact)) before it could be fanned out",
            tasks: Tasks(planned: 0), timings: Timings(publishedAt: publishedAt, acceptedAt: now, completedAt: now), hub: hub
        )
    }

    /// The record of a scheduled event in its schedule's current state.
    public static func scheduled(_ scheduled: ScheduledEvent, reason: String? = nil, at now: Date) -> StatusRecord {
        let state = scheduled.state
        return StatusRecord(
            eventId: scheduled.eventId, state: state, reason: reason, tasks: Tasks(planned: 0),
            timings: Timings(
                publishedAt: scheduled.event.publishedAt, acceptedAt: scheduled.scheduledAt, completedAt: state.isTerminal ? now : nil),
            schedule: Schedule(scheduled), hub: scheduled.event.hub
        )
    }

    /// The record for an event that was refused.
    public static func rejected(
        eventId: String, reason: String, publishedAt: Date?, at now: Date, hub: HubName = .default
    ) -> StatusRecord {
        StatusRecord(
            eventId: eventId, state: .rejected, reason: reason, tasks: Tasks(planned: 0),
            timings: Timings(publishedAt: publishedAt, acceptedAt: now, completedAt: now), hub: hub
        )
    }
}

extension StatusRecord: Codable {
    enum CodingKeys: String, CodingKey {
        case hub, eventId, state, reason, tasks, targets, skipped, failed, timings, schedule, push, plans, test, rehearsal,
            skippedReasons, corrections, correctionOf, reach, engagement
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        hub = try container.decodeIfPresent(HubName.self, forKey: .hub) ?? .default
        eventId = try container.decode(String.self, forKey: .eventId)
        state = try container.decode(State.self, forKey: .state)
        reason = try container.decodeIfPresent(String.self, forKey: .reason)
        tasks = try container.decode(Tasks.self, forKey: .tasks)
        targets = try container.decodeIfPresent(DeliveryCounts.self, forKey: .targets) ?? DeliveryCounts()
        skipped = try container.decodeIfPresent(Int.self, forKey: .skipped) ?? 0
        failed = try container.decodeIfPresent(Int.self, forKey: .failed) ?? 0
        timings = try container.decode(Timings.self, forKey: .timings)
        schedule = try container.decodeIfPresent(Schedule.self, forKey: .schedule)
        push = try container.decodeIfPresent([String: [String: Int]].self, forKey: .push)
        plans = try container.decodeIfPresent([String: Int].self, forKey: .plans)
        skippedReasons = try container.decodeIfPresent([String: Int].self, forKey: .skippedReasons)
        corrections = try container.decodeIfPresent([String].self, forKey: .corrections)
        reach = try container.decodeIfPresent(Reach.self, forKey: .reach)
        engagement = try container.decodeIfPresent(EngagementFunnel.self, forKey: .engagement)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        if !hub.isDefault { try container.encode(hub, forKey: .hub) }
        try container.encode(eventId, forKey: .eventId)
        try container.encode(state, forKey: .state)
        try container.encode(reason, forKey: .reason)
        try container.encode(tasks, forKey: .tasks)
        try container.encode(targets, forKey: .targets)
        try container.encode(skipped, forKey: .skipped)
        try container.encode(failed, forKey: .failed)
        try container.encode(timings, forKey: .timings)
        try container.encodeIfPresent(schedule, forKey: .schedule)
        try container.encodeIfPresent(push, forKey: .push)
        try container.encodeIfPresent(plans, forKey: .plans)
        try container.encodeIfPresent(skippedReasons, forKey: .skippedReasons)
        if isTest { try container.encode(true, forKey: .test) }
        if isRehearsal { try container.encode(true, forKey: .rehearsal) }
        try container.encodeIfPresent(correctionOf, forKey: .correctionOf)
        try container.encodeIfPresent(corrections, forKey: .corrections)
        try container.encodeIfPresent(reach, forKey: .reach)
        try container.encodeIfPresent(engagement, forKey: .engagement)
    }
}

extension StatusRecord.Timings: Codable {
    enum CodingKeys: String, CodingKey {
        case publishedAt, acceptedAt, firstDeliveryAt, completedAt, durationMs
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        publishedAt = try container.decodeTimestampIfPresent(forKey: .publishedAt)
        acceptedAt = try container.decodeTimestamp(forKey: .acceptedAt)
        firstDeliveryAt = try container.decodeTimestampIfPresent(forKey: .firstDeliveryAt)
        completedAt = try container.decodeTimestampIfPresent(forKey: .completedAt)
        durationMs = try container.decodeIfPresent(Int64.self, forKey: .durationMs)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeTimestamp(publishedAt, forKey: .publishedAt)
        try container.encodeTimestamp(acceptedAt, forKey: .acceptedAt)
        try container.encodeTimestamp(firstDeliveryAt, forKey: .firstDeliveryAt)
        try container.encodeTimestamp(completedAt, forKey: .completedAt)
        try container.encode(durationMs, forKey: .durationMs)
    }
}

extension StatusRecord {
    /// The status the writers leave after `current` and then `next` (the status scripts of
    /// HeraldPipeline apply the same rule in Redis): a rejection never replaces a status, a
    /// final state is kept against a different one, and progress never goes back.
    public static func fold(_ current: StatusRecord?, _ next: StatusRecord) -> StatusRecord {
        guard let current else { return next }
        if next.state == .rejected { return current }
        if [.completed, .expired, .cancelled].contains(current.state) && current.state != next.state { return current }
        // A schedule's records never replace the fan-out's that came after its release.
        if next.state == .scheduled && current.state != .scheduled { return current }
        if next.state == .released && ![.scheduled, .released].contains(current.state) { return current }
        if next.tasks.completed < current.tasks.completed { return current }
        return next
    }
}

extension StatusRecord {
    /// The `reason` of an event stopped while it was fanned out: its counts are what was
    /// delivered before the stop.
    public static func stoppedReason(tasks: Int, of planned: Int) -> String {
        "stopped in flight: \(tasks) of \(planned) tasks were cut short or skipped; the counts are what was delivered before the stop"
    }
}
