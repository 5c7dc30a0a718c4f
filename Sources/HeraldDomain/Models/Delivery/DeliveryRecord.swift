import Foundation

/// One notification ready for a push service: the value of `herald.deliveries`, one
/// record per (event, registration, template), keyed by registration id.
public struct DeliveryRecord: Sendable, Hashable {
    /// The `template` of a delivery to a native registration (one without a template).
    /// Template names cannot start with `$`, so it never collides with a real one.
    public static let nativeTemplateName = "$native"

    /// The hub of the event and the registration (absent in JSON: the default hub).
    public var hub: HubName
    public var eventId: String
    public var registrationId: String
    public var platform: Platform
    public var handle: String
    /// The template name, or ``nativeTemplateName``.
    public var template: String
    /// The rendered body (JSON, or XML for WNS toasts).
    public var payload: String
    public var headers: DeliveryHeaders
    public var expiresAt: Date?
    public var publishedAt: Date?
    public var renderedAt: Date
    /// A delivery of a test send (`testRecipients`): `"test": true` in JSON, absent otherwise.
    public var test: Bool
    /// A delivery of a correction (``EventCorrection``): the id of the event it corrects,
    /// `"correctionOf"` in JSON, absent otherwise. ``eventId`` is the correction's own.
    public var correctionOf: String?
    /// The properties the template read in place of missing ones through its `|` chains (a
    /// locale's fallbacks: `news_en` for `$(News_fr | News_en)` of an event without
    /// `News_fr`), lower-cased and sorted: `"fallbacks"` in JSON, absent when none was.
    public var fallbacks: [String]

    public init(
        eventId: String, registrationId: String, platform: Platform, handle: String, template: String,
        payload: String, headers: DeliveryHeaders, expiresAt: Date?, publishedAt: Date?, renderedAt: Date,
        hub: HubName = .default, test: Bool = false, correctionOf: String? = nil, fallbacks: [String] = []
    ) {
        self.hub = hub
        self.fallbacks = fallbacks
        self.correctionOf = correctionOf
        self.test = test
        self.eventId = eventId
        self.registrationId = registrationId
        self.platform = platform
        self.handle = handle
        self.template = template
        self.payload = payload
        self.headers = headers
        self.expiresAt = expiresAt
        self.publishedAt = publishedAt
        self.renderedAt = renderedAt
    }

    /// `<eventId>/<registrationId>/<template>`: the same delivery always gets the same id,
    /// so consumers can de-duplicate. None of the parts can contain `/` (see
    /// ``IdentifierRules``), so the id splits back unambiguously.
    public var deliveryId: String {
        Self.deliveryId(eventId: eventId, registrationId: registrationId, template: template)
    }

    public static func deliveryId(eventId: String, registrationId: String, template: String) -> String {
        "\(eventId)/\(registrationId)/\(template)"
    }
}
