import Foundation

/// How one delivery ended at its push service.
public enum PushOutcome: String, Sendable, Hashable, Codable, CaseIterable {
    /// The service accepted the message (APNs 200, FCM 200).
    case sent
    /// The service refused this message for good (its payload, topic or arguments); the
    /// registration stays.
    case rejected
    /// The service says the token reaches no device any more (APNs 410 or `BadDeviceToken`,
    /// FCM `UNREGISTERED`); the registration is removed unless it changed since the push.
    case unregistered
    /// Its `expiresAt` passed before it could be sent: never sent.
    case expired
    /// No attempt succeeded (throttling, service errors, lost connections, refused
    /// credentials), or no sender exists for its platform; `reason` says which.
    case failed
    /// Its event was stopped (`DELETE /v1/notifications/{id}`) before it was sent: never sent.
    case cancelled
}

/// The one final receipt of a delivery (`herald.receipts`, key: the delivery id).
public struct PushReceipt: Sendable, Hashable {
    /// The delivery's hub (absent in JSON: the default hub).
    public var hub: HubName
    public var deliveryId: String
    public var eventId: String
    public var registrationId: String
    public var platform: Platform
    public var outcome: PushOutcome
    /// The HTTP status of the last answer; nil when no request was answered (or none was sent).
    public var statusCode: Int?
    /// The service's reason (APNs `reason`, FCM error code) or Herald's, in words.
    public var reason: String?
    /// Requests sent: 0 for a delivery that expired or had no sender.
    public var attempts: Int
    /// From the first attempt to the final answer.
    public var latencyMs: Int64?
    /// The `apns-id` or the FCM message `name` of a sent message.
    public var serviceId: String?
    /// When the service last knew the token to be invalid (APNs 410 `timestamp`).
    public var unregisteredAt: Date?
    /// When the sender decided the outcome.
    public var decidedAt: Date

    public init(
        deliveryId: String, eventId: String, registrationId: String, platform: Platform, outcome: PushOutcome,
        statusCode: Int? = nil, reason: String? = nil, attempts: Int, latencyMs: Int64? = nil, serviceId: String? = nil,
        unregisteredAt: Date? = nil, decidedAt: Date, hub: HubName = .default
    ) {
        self.hub = hub
        self.deliveryId = deliveryId
        self.eventId = eventId
        self.registrationId = registrationId
        self.platform = platform
        self.outcome = outcome
        self.statusCode = statusCode
        self.reason = reason
        self.attempts = attempts
        self.latencyMs = latencyMs
        self.serviceId = serviceId
        self.unregisteredAt = unregisteredAt
        self.decidedAt = decidedAt
    }

    /// The receipt of a delivery for a platform Herald has no sender for: never dropped in
    /// silence, it ends `failed` with a reason that says so.
    public static func noSender(for delivery: DeliveryRecord, at now: Date) -> PushReceipt {
        PushReceipt(
            deliveryId: delivery.deliveryId, eventId: delivery.eventId, registrationId: delivery.registrationId,
            platform: delivery.platform, outcome: .failed,
            reason: "no_sender: Herald has no \(delivery.platform) sender; consume herald.deliveries to push it", attempts: 0,
            decidedAt: now, hub: delivery.hub)
    }

    /// The receipt of a delivery whose event was stopped before a request was sent.
    public static func cancelled(_ delivery: DeliveryRecord, at now: Date) -> PushReceipt {
        PushReceipt(
            deliveryId: delivery.deliveryId, eventId: delivery.eventId, registrationId: delivery.registrationId,
            platform: delivery.platform, outcome: .cancelled, reason: "cancelled: the event was stopped before this delivery was sent",
            attempts: 0, decidedAt: now, hub: delivery.hub)
    }

    /// The receipt of a delivery whose `expiresAt` passed before a request was sent.
    public static func expired(_ delivery: DeliveryRecord, attempts: Int = 0, at now: Date) -> PushReceipt {
        PushReceipt(
            deliveryId: delivery.deliveryId, eventId: delivery.eventId, registrationId: delivery.registrationId,
            platform: delivery.platform, outcome: .expired,
            reason: "expired at \(delivery.expiresAt.map { ISO8601Timestamp.format($0) } ?? "?") before it could be sent",
            attempts: attempts,
            decidedAt: now, hub: delivery.hub)
    }
}

extension PushReceipt: Codable {
    enum CodingKeys: String, CodingKey {
        case hub, deliveryId, eventId, registrationId, platform, outcome, statusCode, reason, attempts, latencyMs, serviceId,
            unregisteredAt, decidedAt
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        hub = try container.decodeIfPresent(HubName.self, forKey: .hub) ?? .default
        deliveryId = try container.decode(String.self, forKey: .deliveryId)
        eventId = try container.decode(String.self, forKey: .eventId)
        registrationId = try container.decode(String.self, forKey: .registrationId)
        platform = try container.decode(Platform.self, forKey: .platform)
        outcome = try container.decode(PushOutcome.self, forKey: .outcome)
        statusCode = try container.decodeIfPresent(Int.self, forKey: .statusCode)
        reason = try container.decodeIfPresent(String.self, forKey: .reason)
        attempts = try container.decode(Int.self, forKey: .attempts)
        latencyMs = try container.decodeIfPresent(Int64.self, forKey: .latencyMs)
        serviceId = try container.decodeIfPresent(String.self, forKey: .serviceId)
        unregisteredAt = try container.decodeTimestampIfPresent(forKey: .unregisteredAt)
        decidedAt = try container.decodeTimestamp(forKey: .decidedAt)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        if !hub.isDefault { try container.encode(hub, forKey: .hub) }
        try container.encode(deliveryId, forKey: .deliveryId)
        try container.encode(eventId, forKey: .eventId)
        try container.encode(registrationId, forKey: .registrationId)
        try container.encode(platform, forKey: .platform)
        try container.encode(outcome, forKey: .outcome)
        try container.encodeIfPresent(statusCode, forKey: .statusCode)
        try container.encodeIfPresent(reason, forKey: .reason)
        try container.encode(attempts, forKey: .attempts)
        try container.encodeIfPresent(latencyMs, forKey: .latencyMs)
        try container.encodeIfPresent(serviceId, forKey: .serviceId)
        if let unregisteredAt { try container.encodeTimestamp(unregisteredAt, forKey: .unregisteredAt) }
        try container.encodeTimestamp(decidedAt, forKey: .decidedAt)
    }
}
