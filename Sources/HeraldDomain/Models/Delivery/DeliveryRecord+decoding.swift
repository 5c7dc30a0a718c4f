import Foundation

/// Decoding for consumers of `herald.deliveries`. The `deliveryId` field is derived from
/// the other fields, so it is checked against them rather than stored.
extension DeliveryRecord: Codable {
    enum CodingKeys: String, CodingKey {
        case hub, deliveryId, eventId, registrationId, platform, handle, template, payload, headers, expiresAt, publishedAt, renderedAt,
            test, correctionOf, fallbacks
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        hub = try container.decodeIfPresent(HubName.self, forKey: .hub) ?? .default
        eventId = try container.decode(String.self, forKey: .eventId)
        registrationId = try container.decode(String.self, forKey: .registrationId)
        platform = try container.decode(Platform.self, forKey: .platform)
        handle = try container.decode(String.self, forKey: .handle)
        template = try container.decode(String.self, forKey: .template)
        payload = try container.decode(String.self, forKey: .payload)
        let headerContainer = try container.nestedContainer(keyedBy: JSONCodingKey.self, forKey: .headers)
        var headers = DeliveryHeaders()
        for key in headerContainer.allKeys {
            headers.append(name: key.stringValue, value: try headerContainer.decode(String.self, forKey: key))
        }
        self.headers = headers
        expiresAt = try container.decodeTimestampIfPresent(forKey: .expiresAt)
        publishedAt = try container.decodeTimestampIfPresent(forKey: .publishedAt)
        renderedAt = try container.decodeTimestamp(forKey: .renderedAt)
        test = try container.decodeIfPresent(Bool.self, forKey: .test) ?? false
        correctionOf = try container.decodeIfPresent(String.self, forKey: .correctionOf)
        fallbacks = try container.decodeIfPresent([String].self, forKey: .fallbacks) ?? []
        if let stated = try container.decodeIfPresent(String.self, forKey: .deliveryId), stated != deliveryId {
            throw DecodingError.dataCorruptedError(
                forKey: .deliveryId, in: container,
                debugDescription: "deliveryId \"\(stated)\" does not match its parts (\"\(deliveryId)\")"
            )
        }
    }

    /// Encodes with any `Encoder`; prefer ``encode(into:)``, which is faster and keeps the
    /// contract's field order.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        if !hub.isDefault { try container.encode(hub, forKey: .hub) }
        try container.encode(deliveryId, forKey: .deliveryId)
        try container.encode(eventId, forKey: .eventId)
        try container.encode(registrationId, forKey: .registrationId)
        try container.encode(platform, forKey: .platform)
        try container.encode(handle, forKey: .handle)
        try container.encode(template, forKey: .template)
        try container.encode(payload, forKey: .payload)
        var headerContainer = container.nestedContainer(keyedBy: JSONCodingKey.self, forKey: .headers)
        for field in headers.fields {
            try headerContainer.encode(field.value, forKey: JSONCodingKey(field.name))
        }
        try container.encodeTimestamp(expiresAt, forKey: .expiresAt, precision: .secondsWhenExact)
        try container.encodeTimestamp(publishedAt, forKey: .publishedAt)
        try container.encodeTimestamp(renderedAt, forKey: .renderedAt)
        if test { try container.encode(true, forKey: .test) }
        try container.encodeIfPresent(correctionOf, forKey: .correctionOf)
        if !fallbacks.isEmpty { try container.encode(fallbacks, forKey: .fallbacks) }
    }

    /// Decodes a record keeping the header order as written (`Codable` cannot).
    public static func decode(_ bytes: some Collection<UInt8>) throws(ValidationFailure) -> DeliveryRecord {
        let root: JSONValue
        switch JSONFieldReader.parseObject(bytes, maximumBytes: .max, what: "the delivery record") {
        case .success(let value): root = value
        case .failure(let failure): throw failure
        }
        var issues: [ValidationIssue] = []
        let reader = JSONFieldReader(root)
        let hub = reader.hub(issues: &issues)
        let stated = reader.string("deliveryId", required: false, issues: &issues)
        let eventId = reader.string("eventId", required: true, issues: &issues)
        let registrationId = reader.string("registrationId", required: true, issues: &issues)
        let platform = reader.platform("platform", issues: &issues)
        let handle = reader.string("handle", required: true, issues: &issues)
        let template = reader.string("template", required: true, issues: &issues)
        let payload = reader.string("payload", required: true, issues: &issues)
        var headers = DeliveryHeaders()
        if let headerReader = reader.object("headers", required: false, issues: &issues), case .object(let members) = headerReader.value {
            for member in members {
                guard case .string(let value) = member.value else {
                    issues.append(JSONFieldReader.wrongType("headers.\(member.key)", expected: "a string", found: member.value))
                    continue
                }
                headers.append(name: member.key, value: value)
            }
        }
        let expiresAt = reader.timestamp("expiresAt", issues: &issues)
        let publishedAt = reader.timestamp("publishedAt", issues: &issues)
        let renderedAt = reader.timestamp("renderedAt", issues: &issues)
        if reader.member("renderedAt") == nil {
            issues.append(JSONFieldReader.missing("renderedAt", expected: "a timestamp"))
        }
        var test = false
        if let member = reader.member("test") {
            if case .bool(let flag) = member {
                test = flag
            } else {
                issues.append(JSONFieldReader.wrongType("test", expected: "a boolean", found: member))
            }
        }
        let correctionOf = reader.string("correctionOf", required: false, issues: &issues)
        let fallbacks = reader.stringArray("fallbacks", required: false, issues: &issues) ?? []
        guard issues.isEmpty, let eventId, let registrationId, let platform, let handle, let template, let payload, let renderedAt else {
            throw ValidationFailure(issues: issues)
        }
        let record = DeliveryRecord(
            eventId: eventId, registrationId: registrationId, platform: platform, handle: handle, template: template,
            payload: payload, headers: headers, expiresAt: expiresAt, publishedAt: publishedAt, renderedAt: renderedAt,
            hub: hub, test: test, correctionOf: correctionOf, fallbacks: fallbacks
        )
        if let stated, stated != record.deliveryId {
            throw ValidationFailure(issues: [
                ValidationIssue(
                    field: "deliveryId", code: ValidationIssue.Code.invalidValue,
                    message: "\"\(stated)\" does not match its parts (\"\(record.deliveryId)\")"
                )
            ])
        }
        return record
    }
}
