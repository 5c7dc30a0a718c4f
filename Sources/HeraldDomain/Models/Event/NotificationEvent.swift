import Foundation

/// A breaking-news event as published on `herald.events` (or `POST /v1/notifications`):
/// who receives it (``audience``), what template registrations render (``properties``),
/// what native registrations receive (``native``), and delivery options.
///
/// Untrusted bytes become an event through ``decode(_:limits:)``, which reports every
/// problem; the `Codable` conformance is for trusted internal topics (tasks, status).
public struct NotificationEvent: Sendable, Hashable {
    /// The hub whose registrations receive the event (absent in JSON: the default hub).
    /// Event ids are unique within a hub.
    public var hub: HubName
    /// Optional over HTTP (assigned by the API); over Kafka derived from the record
    /// position when absent (the planner does that, not this type).
    public var id: String?
    public var audience: Audience
    /// Template properties by name. Numbers and booleans are kept as their JSON text
    /// (`3`, `1.50`, `true`), so `#(p)` can emit them unquoted.
    public var properties: [String: String]
    /// Native payloads for registrations without a template: compact JSON text of the
    /// object given for each platform (members sorted by key). For WNS the payload may
    /// also be a JSON string holding XML, kept as that XML text.
    public var native: [Platform: String]
    /// When set, only template registrations whose template name is listed receive the
    /// event (native registrations are not affected). An empty list selects no template, so
    /// only native registrations receive it (Azure's native sends); it needs native payloads.
    public var templates: [String]?
    /// After this instant the event is not delivered any more.
    public var expiresAt: Date?
    /// nil when the publisher did not say: each platform then gets its own default (APNs
    /// alerts 10, as Apple's own default; background pushes 5; FCM and web push normal).
    public var priority: NotificationPriority?
    /// Replaces an earlier notification with the same id on the device (APNs collapse id,
    /// FCM collapse key, web push topic).
    public var collapseId: String?
    /// When the publisher sent it; set by publishers, used for latency and status timings.
    public var publishedAt: Date?
    /// When to deliver it (`sendAt` or `sendAtLocal`); nil: now.
    public var schedule: EventSchedule?
    /// When set, the event is for Live Activities: it goes to the audience's Live Activity
    /// tokens (`update`, `end`) or push-to-start tokens (`start`) only, as APNs `liveactivity`
    /// pushes built from it; without it, those tokens receive nothing.
    public var liveActivity: LiveActivityUpdate?
    /// When set, a test send: the event goes to these devices only (whatever its `tags`),
    /// fully rendered, marked `test` in its delivery records and status, under an id of its
    /// own (``DerivedSend``), so the event's id stays free for the real send.
    public var testRecipients: [TestRecipient]?
    /// How the event ranks against the others being fanned out (nil: `normal`): a `breaking`
    /// one's tasks go first on every worker, lower-urgency work stepping aside between pages.
    public var urgency: Urgency?
    /// When set, this event corrects the event with the same ``id`` already sent: it goes to
    /// the devices that one reached, under an id of its own (``DerivedSend/correction``).
    public var correction: EventCorrection?
    /// What the event does with a device in its quiet hours (nil: `hold`); a breaking event is
    /// not held back by them.
    public var quietHours: QuietHoursPolicy?
    /// When set, a direct send: the event's native payloads go to these handles only, with no
    /// registration looked up (`DirectTarget`); it has no `tags`, properties or templates.
    public var direct: [DirectTarget]?
    /// Set by Herald on the release of alerts held for quiet hours: the event goes only to the
    /// devices whose quiet hours held it then and end now.
    public var quietRelease: QuietRelease?

    public init(
        id: String? = nil, audience: Audience = .broadcast, properties: [String: String] = [:],
        native: [Platform: String] = [:], templates: [String]? = nil, expiresAt: Date? = nil,
        priority: NotificationPriority? = nil, collapseId: String? = nil, publishedAt: Date? = nil,
        schedule: EventSchedule? = nil, hub: HubName = .default, liveActivity: LiveActivityUpdate? = nil,
        testRecipients: [TestRecipient]? = nil, urgency: Urgency? = nil, correction: EventCorrection? = nil
    ) {
        self.hub = hub
        self.correction = correction
        self.urgency = urgency
        self.testRecipients = testRecipients
        self.liveActivity = liveActivity
        self.schedule = schedule
        self.id = id
        self.audience = audience
        self.properties = properties
        self.native = native
        self.templates = templates
        self.expiresAt = expiresAt
        self.priority = priority
        self.collapseId = collapseId
        self.publishedAt = publishedAt
    }

    /// What a later correction replaces this event's alert by, on the device: the collapse id
    /// when the event has one, else its id. Every delivery carries it in its platform's replace
    /// header (`apns-collapse-id`, the Android notification `tag`, Web Push `Topic`,
    /// `X-WNS-Tag`; ``DeliveryHeaders``), so an alert sent without a collapse id can still be
    /// corrected in place.
    public var replaceKey: String? { collapseId ?? id }

    /// Whether a registration with template `name` receives this event under the
    /// ``templates`` filter.
    public func includesTemplate(named name: String) -> Bool {
        templates.map { $0.contains(name) } ?? true
    }
}

/// Who an event is for.
public enum Audience: Sendable, Hashable {
    /// Every registration (the event had no `tags`).
    case broadcast
    /// Registrations whose tags satisfy the expression. `source` is the text it was parsed
    /// from; a `tags` array `["a", "b"]` is kept as `a || b`.
    case expression(TagExpression, source: String)

    /// The parsed expression, `nil` for a broadcast.
    public var expression: TagExpression? {
        if case .expression(let expression, _) = self { return expression }
        return nil
    }

    /// Whether a registration with `tags` is in the audience.
    public func matches(_ tags: Set<String>) -> Bool {
        expression?.evaluate(tags) ?? true
    }
}

/// How urgently to deliver: mapped to each platform's priority header.
public enum NotificationPriority: String, Sendable, Hashable, Codable, CaseIterable {
    case high
    case normal
}

/// An event's rank against the others being fanned out (`urgency`).
public enum Urgency: String, Sendable, Hashable, Codable, CaseIterable {
    /// Goes first: its tasks run on the express lanes, and every worker's bulk lanes pause
    /// between pages while they run; the sender sends its deliveries first.
    case breaking
    /// The default: the bulk lanes, in the order of arrival.
    case normal
    /// Digests and other sends that may wait: the bulk lanes, like `normal`, and paused for
    /// `breaking` work the same way.
    case bulk
}

/// Limits applied when an event is decoded.
public struct EventLimits: Sendable, Hashable {
    /// Size of the whole event in bytes; its task record is about twice that, which keeps it
    /// under every producer's and topic's record limit (``RecordSizes``).
    public var maxBytes: Int
    /// Number of properties.
    public var maxProperties: Int
    /// `collapseId` in UTF-8 bytes (APNs refuses collapse ids over 64 bytes).
    public var maxCollapseIdBytes: Int
    /// Limits for parsing the `tags` expression.
    public var tagExpression: TagExpressionLimits
    /// A native payload over its platform's limit could reach no device: refused at the door.
    public var payloadLimits: PayloadLimits

    public init(
        maxBytes: Int = RecordSizes.maxEventBytes, maxProperties: Int = 1_000, maxCollapseIdBytes: Int = 64,
        tagExpression: TagExpressionLimits = .default, payloadLimits: PayloadLimits = .default
    ) {
        self.payloadLimits = payloadLimits
        self.maxBytes = maxBytes
        self.maxProperties = maxProperties
        self.maxCollapseIdBytes = maxCollapseIdBytes
        self.tagExpression = tagExpression
    }

    public static let `default` = EventLimits()

    /// For copies of events that were validated at the door with the deployment's limits
    /// (which may be wider than the defaults): no size ceilings, only the nesting depth that
    /// keeps the expression parser's recursion bounded.
    public static let trusted = EventLimits(
        maxBytes: .max, maxProperties: .max, maxCollapseIdBytes: .max,
        tagExpression: TagExpressionLimits(maxLength: .max, maxTags: .max),
        payloadLimits: PayloadLimits(apns: .max, fcm: .max, wns: .max, webpush: .max)
    )
}
