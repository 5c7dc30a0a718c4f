import Foundation

/// When a scheduled event is to be delivered: at one instant (`sendAt`), or at a wall-clock
/// time in each device's own time zone (`sendAtLocal`).
public enum EventSchedule: Sendable, Hashable {
    case at(Date)
    case localTime(LocalDateTime)

    /// The event field that carries it.
    public var field: String {
        switch self {
        case .at: "sendAt"
        case .localTime: "sendAtLocal"
        }
    }
}

/// One timed release of a scheduled event: the event (or, for a local-time schedule, the part
/// of its audience in some time zones) published to `herald.events` at `releaseAt`.
public struct ScheduledRelease: Sendable, Hashable, Codable {
    public enum State: String, Sendable, Hashable, Codable {
        case pending, released, cancelled
    }

    /// The id the released event carries: the schedule's own for `sendAt`, `<id>@<n>` for
    /// the n-th part of a local-time schedule.
    public var eventId: String
    public var releaseAt: Date
    /// The zones whose devices this part reaches; nil: the whole audience (`sendAt`).
    public var timeZones: [String]?
    /// Whether this part also reaches devices without a zone (the default zone's part).
    public var includesZoneless: Bool
    public var state: State

    public init(eventId: String, releaseAt: Date, timeZones: [String]? = nil, includesZoneless: Bool = false, state: State = .pending) {
        self.eventId = eventId
        self.releaseAt = releaseAt
        self.timeZones = timeZones
        self.includesZoneless = includesZoneless
        self.state = state
    }

    enum CodingKeys: String, CodingKey {
        case eventId, releaseAt, timeZones, includesZoneless, state
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        eventId = try container.decode(String.self, forKey: .eventId)
        releaseAt = try container.decodeTimestamp(forKey: .releaseAt)
        timeZones = try container.decodeIfPresent([String].self, forKey: .timeZones)
        includesZoneless = try container.decodeIfPresent(Bool.self, forKey: .includesZoneless) ?? false
        state = try container.decode(State.self, forKey: .state)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(eventId, forKey: .eventId)
        try container.encodeTimestamp(releaseAt, forKey: .releaseAt)
        try container.encodeIfPresent(timeZones, forKey: .timeZones)
        if includesZoneless { try container.encode(true, forKey: .includesZoneless) }
        try container.encode(state, forKey: .state)
    }
}

/// The deployment's rules for schedules: how late a `sendAt` may be and still go out at
/// once, how far ahead it may be, and the zone of devices that did not say theirs.
public struct ScheduleRules: Sendable, Hashable {
    /// A `sendAt` at most this far in the past is sent at once; further back it is refused.
    public var pastToleranceSeconds: Double
    /// The latest release may be at most this far ahead.
    public var horizonSeconds: Double
    /// The zone of registrations without a `timeZone`.
    public var defaultTimeZone: String

    public init(pastToleranceSeconds: Double = 60, horizonSeconds: Double = 30 * 86_400, defaultTimeZone: String = "UTC") {
        self.pastToleranceSeconds = pastToleranceSeconds
        self.horizonSeconds = horizonSeconds
        self.defaultTimeZone = defaultTimeZone
    }

    public static let `default` = ScheduleRules()

    /// What to do with an event now.
    public enum Decision: Sendable, Hashable {
        /// No schedule, or a `sendAt` that is due (within the tolerance): fan out now.
        case sendNow
        /// Keep it until each release's time.
        case schedule([ScheduledRelease])
    }

    /// Decides for `event` (whose id is set) at `now`; a time too far in the past or the
    /// future is an issue on the field that named it.
    public func decide(_ event: NotificationEvent, eventId: String, now: Date) throws(ValidationFailure) -> Decision {
        guard let schedule = event.schedule else { return .sendNow }
        let releases: [ScheduledRelease]
        switch schedule {
        case .at(let instant):
            if instant <= now {
                guard now.timeIntervalSince(instant) <= pastToleranceSeconds else {
                    throw Self.failure(
                        "sendAt",
                        "\(ISO8601Timestamp.format(instant, precision: .secondsWhenExact)) is \(Self.span(now.timeIntervalSince(instant))) in the past (at most \(Self.span(pastToleranceSeconds)) late is sent at once)"
                    )
                }
                return .sendNow
            }
            releases = [ScheduledRelease(eventId: eventId, releaseAt: instant)]
        case .localTime(let local):
            releases = Self.localReleases(local, eventId: eventId, defaultZone: defaultTimeZone)
            if let first = releases.first, now.timeIntervalSince(first.releaseAt) > pastToleranceSeconds {
                throw Self.failure(
                    "sendAtLocal",
                    "\(local) has already passed in \(first.timeZones?.first ?? "some zones") (at \(ISO8601Timestamp.format(first.releaseAt, precision: .secondsWhenExact))); a local-time schedule must lie ahead in every zone, so the earliest is at least \(Self.span(pastToleranceSeconds)) ahead"
                )
            }
            if let part = releases.first(where: { IdentifierRules.eventIdProblem($0.eventId) != nil }) {
                throw Self.failure(
                    "id", "the id is too long for a local-time schedule, whose parts are named \(part.eventId)")
            }
        }
        if let last = releases.last, last.releaseAt.timeIntervalSince(now) > horizonSeconds {
            throw Self.failure(
                schedule.field,
                "the \(releases.count > 1 ? "last release" : "release") at \(ISO8601Timestamp.format(last.releaseAt, precision: .secondsWhenExact)) is \(Self.span(last.releaseAt.timeIntervalSince(now))) ahead; the limit is \(Self.span(horizonSeconds))"
            )
        }
        return .schedule(releases)
    }

    /// The parts of a local-time schedule: every zone of the database grouped by the instant
    /// `local` happens there, earliest first, each named `<eventId>@<n>`. The default zone's
    /// part also takes the registrations without a zone. Each zone is in exactly one part, so
    /// each device receives the event once, at its own local time.
    public static func localReleases(
        _ local: LocalDateTime, eventId: String, defaultZone: String, zones: [String] = TimeZoneRules.knownZones
    ) -> [ScheduledRelease] {
        var byInstant: [Date: [String]] = [:]
        for name in zones {
            guard let zone = TimeZone(identifier: name) else { continue }
            byInstant[local.instant(in: zone), default: []].append(name)
        }
        let defaultInstant = TimeZone(identifier: defaultZone).map { local.instant(in: $0) }
        return byInstant.keys.sorted().enumerated().map { index, instant in
            ScheduledRelease(
                eventId: "\(eventId)@\(index + 1)", releaseAt: instant, timeZones: byInstant[instant]!.sorted(),
                includesZoneless: instant == defaultInstant
            )
        }
    }

    static func failure(_ field: String, _ message: String) -> ValidationFailure {
        ValidationFailure(issues: [ValidationIssue(field: field, code: ValidationIssue.Code.invalidSchedule, message: message)])
    }

    /// `90 s`, `12 min`, `5 h`, `30 days`: a duration as a person would say it.
    static func span(_ seconds: Double) -> String {
        let value = abs(seconds)
        if value < 120 { return "\(Int(value.rounded())) s" }
        if value < 7_200 { return "\(Int((value / 60).rounded())) min" }
        if value < 172_800 { return "\(Int((value / 3_600).rounded())) h" }
        return "\(Int((value / 86_400).rounded())) days"
    }
}

extension NotificationEvent {
    /// The event one release publishes: this event without its schedule, under the release's
    /// id, with its audience narrowed to the release's zones (`$TimeZone:{zone}` tags, and
    /// `!$TimeZone:{any}` for devices without a zone).
    public func released(_ release: ScheduledRelease) -> NotificationEvent {
        var event = self
        event.schedule = nil
        event.id = release.eventId
        guard let zones = release.timeZones else { return event }
        var terms = zones.map { "\(TagRules.timeZonePrefix){\($0)}" }
        if release.includesZoneless { terms.append("!\(TagRules.anyTimeZoneTag)") }
        precondition(!terms.isEmpty, "a local-time release names at least one zone")
        let zoneExpression = terms.joined(separator: " || ")
        let source: String
        switch audience {
        case .broadcast: source = zoneExpression
        case .expression(_, let text): source = "(\(text)) && (\(zoneExpression))"
        }
        do {
            // No tag-count ceiling: the zones of one part are Herald's, not the publisher's.
            let expression = try TagExpression.parse(source, limits: TagExpressionLimits(maxLength: .max, maxTags: .max))
            event.audience = .expression(expression, source: source)
        } catch {
            preconditionFailure("a release's audience is built from a parsed expression and valid zone tags: \(error)")
        }
        return event
    }
}
