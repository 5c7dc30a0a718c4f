import Foundation

/// A device (or one template of an installation) that can receive notifications: the
/// value of the compacted `herald.registrations` topic, keyed by `registrationId`.
///
/// A registration with a ``template`` receives the event's `properties` rendered through
/// it; one without receives the event's `native[platform]` payload.
public struct Registration: Sendable, Hashable {
    /// The hub the registration belongs to; ids are unique within a hub.
    public var hub: HubName
    public var registrationId: String
    public var platform: Platform
    /// Device token (APNs), registration token (FCM), channel URI (WNS) or endpoint (web push).
    public var handle: String
    /// Tags the registration answers to, including system tags such as `$UserId:{alice}`.
    public var tags: [String]
    public var template: RegistrationTemplate?
    /// After this instant the registration stops matching and the indexer removes it.
    public var expiresAt: Date?
    /// Grows with every change; the index ignores a change older than what it holds.
    public var version: Int64
    /// The device's IANA time zone, for local-time schedules (`sendAtLocal`); nil means the
    /// deployment's default zone. The index adds `$TimeZone:{zone}` tags from it.
    public var timeZone: String?
    /// The device's quiet hours (`QuietHours`, `22:00-07:00`) in its time zone; nil: none. The
    /// index adds `$QuietHours:{…}` tags from it.
    public var quietHours: String?
    /// The device's own most alerts per window of its hub's frequency caps, in place of each
    /// rule's `maxAlerts` (`FrequencyCap`); nil: the hub's. The index adds `$FrequencyCap:{n}`.
    public var frequencyCap: Int?
    /// APNs only: which token `handle` is (a device's by default, or a Live Activity's or a
    /// push-to-start token). A Live Activity registration has no template: what it receives is
    /// built from an event's `liveActivity`.
    public var tokenKind: APNsTokenKind

    public init(
        registrationId: String, platform: Platform, handle: String, tags: [String] = [],
        template: RegistrationTemplate? = nil, expiresAt: Date? = nil, version: Int64 = 0, timeZone: String? = nil,
        hub: HubName = .default, tokenKind: APNsTokenKind = .device
    ) {
        self.hub = hub
        self.tokenKind = tokenKind
        self.timeZone = timeZone
        self.registrationId = registrationId
        self.platform = platform
        self.handle = handle
        self.tags = tags
        self.template = template
        self.expiresAt = expiresAt
        self.version = version
    }

    /// The name used in `deliveryId` and status counts: the template's name, or
    /// ``DeliveryRecord/nativeTemplateName`` for a native registration.
    public var deliveryTemplateName: String {
        tokenKind.deliveryTemplateName ?? template?.name ?? DeliveryRecord.nativeTemplateName
    }
}

/// A registration's template: its body (JSON, or XML for WNS) with expressions such as
/// `$(News_French)`, platform headers that are templates too, and an optional expiry template.
public struct RegistrationTemplate: Sendable, Hashable {
    /// Names the template in delivery ids, status counts and an event's `templates` filter.
    public var name: String
    public var body: String
    /// Header templates, for example `apns-push-type: alert` or `X-WNS-Type: wns/toast`.
    public var headers: [String: String]
    /// A template that renders to an ISO-8601 instant, for example `$(expiresAt)`.
    public var expiry: String?

    public init(name: String, body: String, headers: [String: String] = [:], expiry: String? = nil) {
        self.name = name
        self.body = body
        self.headers = headers
        self.expiry = expiry
    }
}
