import Foundation
import HeraldDomain
import HeraldKafka
import HeraldRedis
import HeraldRegistry

/// Quiet hours in the fan-out (`QuietHours`): an event (a breaking one only when its hub holds
/// breaking alerts in quiet hours) skips a device whose quiet hours hold it when the task runs (`held_quiet`, or `skipped_quiet` when the event drops
/// them), and counts the held ones by the instant their quiet hours end; the release of an
/// event held for quiet hours (`quietRelease`) goes only to the devices it was held for.
///
/// A device's quiet hours and zone are tags of its view (`$QuietHours:{22:00-07:00}`,
/// `$TimeZone:{Europe/Paris}`), so the check reads nothing from Redis per device; a slot without
/// any registration with quiet hours (`$QuietHours:{any}`) is not checked at all.
struct QuietHoursCheck {
    /// When devices are judged: the task's start, or the held event's time for a release.
    let judgedAt: Date
    let policy: QuietHoursPolicy
    /// Set on a release: only devices whose quiet hours ended at its `releaseAt` get it.
    let release: QuietRelease?
    let defaultZone: TimeZone
    /// Slots holding a registration with quiet hours.
    var slots: Set<Int>
    /// Held devices by the instant their quiet hours end.
    var held: [Date: Int] = [:]
    /// The end of the quiet hours of each (quiet hours, zone) at `judgedAt` (nil: not quiet).
    private var ends: [String: Date?] = [:]

    init(judgedAt: Date, policy: QuietHoursPolicy, release: QuietRelease?, defaultZone: TimeZone, slots: Set<Int>) {
        self.judgedAt = judgedAt
        self.policy = policy
        self.release = release
        self.defaultZone = defaultZone
        self.slots = slots
    }

    enum Decision: Equatable {
        case deliver
        /// Not for this event (a release's device held for another instant): passed over, not counted.
        case passOver
        /// In its quiet hours: skipped with this reason.
        case skip(String)
    }

    /// What to do with the device whose view has `tags` in `slot`.
    mutating func decide(tags: UnsafeRawBufferPointer, slot: Int) -> Decision {
        guard slots.contains(slot) else { return release == nil ? .deliver : .passOver }
        guard let (quiet, zone) = Self.quietHoursAndZone(in: tags) else { return release == nil ? .deliver : .passOver }
        let key = quiet + "|" + (zone ?? "")
        let end: Date?
        if let known = ends[key] {
            end = known
        } else {
            let zone = zone.flatMap(TimeZone.init(identifier:)) ?? defaultZone
            end = QuietHours(quiet)?.end(ifQuietAt: judgedAt, in: zone)
            ends[key] = end
        }
        if let release {
            return end.map { Int64($0.timeIntervalSince1970) == Int64(release.releaseAt.timeIntervalSince1970) } == true
                ? .deliver : .passOver
        }
        guard let end else { return .deliver }
        if policy == .hold { held[end, default: 0] += 1 }
        return .skip(policy.skipReason)
    }

    /// The quiet hours (`22:00-07:00`) and zone named by a view's comma-joined tags; nil when it
    /// has no quiet hours.
    static func quietHoursAndZone(in tags: UnsafeRawBufferPointer) -> (String, String?)? {
        guard tags.firstRange(of: quietPrefix) != nil else { return nil }
        var quiet: String?
        var zone: String?
        for tag in tags.split(separator: UInt8(ascii: ",")) {
            let text = String(decoding: tag, as: UTF8.self)
            if let value = TagRules.systemTagValue(text, prefix: QuietHours.tagPrefix), value != "any" {
                quiet = String(value)
            } else if let value = TagRules.systemTagValue(text, prefix: TagRules.timeZonePrefix), value != "any" {
                zone = String(value)
            }
        }
        return quiet.map { ($0, zone) }
    }

    private static let quietPrefix = Array((QuietHours.tagPrefix + "{").utf8)
}

extension TaskExecutor {
    /// The quiet-hours check of `task`: for an event (not a test send, a direct send, a
    /// correction or a Live Activity update; a breaking one only when its hub holds breaking alerts in quiet hours)
    /// whose slots hold registrations with quiet hours, and for every release of held alerts;
    /// nil otherwise.
    func quietHoursCheck(of task: FanoutTask, now: Date) throws -> QuietHoursCheck? {
        let event = task.event
        let release = event.quietRelease
        guard
            release != nil
                || ((event.urgency != .breaking || task.quietHoursHoldBreaking) && event.testRecipients == nil
                    && event.direct == nil
                    && task.correction == nil
                    && event.liveActivity == nil)
        else { return nil }
        let slots = Array(task.slots)
        let commands = slots.map { RedisCommand("EXISTS", layout.tagKey(slot: $0, tag: QuietHours.anyTag), isReadOnly: true) }
        var quiet: Set<Int> = []
        for (slot, reply) in zip(slots, try redis.pipelineBlocking(commands)) where try reply.get().int == 1 { quiet.insert(slot) }
        guard !quiet.isEmpty || release != nil else { return nil }
        let zone = TimeZone(identifier: configuration.scheduleRules.defaultTimeZone) ?? TimeZone(identifier: "UTC")!
        return QuietHoursCheck(
            judgedAt: release?.heldAt ?? now, policy: event.quietHours ?? .hold, release: release, defaultZone: zone, slots: quiet)
    }

    /// Schedules the release of what `check` held, one per instant, on `herald.scheduled` in the
    /// task's transaction: every task of the event that held devices until the same instant
    /// writes the same schedule (its id names the event and the instant), so the scheduler
    /// releases it once. The release goes to the audience's devices with quiet hours, and its
    /// fan-out keeps those whose quiet hours ended then.
    func scheduleReleases(_ check: QuietHoursCheck, of task: FanoutTask, producer: KafkaProducer) throws {
        guard check.release == nil, check.policy == .hold, let original = task.event.id else { return }
        let topics = configuration.topics
        for releaseAt in check.held.keys.sorted() {
            let id = QuietRelease.eventId(of: original, releaseAt: releaseAt)
            var event = task.event
            event.id = id
            event.schedule = .at(releaseAt)
            event.quietRelease = QuietRelease(heldAt: check.judgedAt, releaseAt: releaseAt)
            let source = event.audience.expression.map { _ in "(\(event.audienceSource)) && \(QuietHours.anyTag)" } ?? QuietHours.anyTag
            // No tag-count ceiling: the added tag is Herald's, not the publisher's.
            let expression = try TagExpression.parse(source, limits: TagExpressionLimits(maxLength: .max, maxTags: .max))
            event.audience = .expression(expression, source: source)
            let scheduled = ScheduledEvent(
                eventId: id, event: event, scheduledAt: check.judgedAt, releases: [ScheduledRelease(eventId: id, releaseAt: releaseAt)])
            try producer.enqueue(
                KafkaOutgoingMessage(
                    topic: topics.scheduled, partition: topics.scheduledPartition(of: scheduled.scheduleKey),
                    key: Array(scheduled.scheduleKey.utf8), value: Array(try JSONEncoder().encode(ScheduleRecord.schedule(scheduled)))))
        }
    }
}

extension NotificationEvent {
    /// The text of the audience's expression ("" for a broadcast).
    var audienceSource: String {
        if case .expression(_, let source) = audience { return source }
        return ""
    }
}
