import Foundation

/// The `herald.events` shape, used for trusted copies of a validated event (inside fan-out
/// tasks). `tags` is written as the expression's source text and omitted for a broadcast;
/// native payloads are written as JSON objects (a WNS XML payload as a string).
extension NotificationEvent: Codable {
    enum CodingKeys: String, CodingKey {
        case id, tags, properties, native, templates, expiresAt, priority, collapseId, publishedAt
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decodeIfPresent(String.self, forKey: .id)
        if let source = try container.decodeIfPresent(String.self, forKey: .tags) {
            do {
                audience = .expression(try TagExpression.parse(source), source: source)
            } catch {
                throw DecodingError.dataCorruptedError(forKey: .tags, in: container, debugDescription: error.description)
            }
        } else {
            audience = .broadcast
        }
        properties = try container.decodeIfPresent([String: String].self, forKey: .properties) ?? [:]
        native = [:]
        if let payloads = try container.decodeIfPresent([String: JSONValue].self, forKey: .native) {
            for (name, payload) in payloads {
                guard let platform = Platform(rawValue: name) else {
                    throw DecodingError.dataCorruptedError(forKey: .native, in: container, debugDescription: "unknown platform \"\(name)\"")
                }
                if case .string(let xml) = payload {
                    native[platform] = xml
                } else {
                    native[platform] = payload.compactText(sortingKeys: true)
                }
            }
        }
        templates = try container.decodeIfPresent([String].self, forKey: .templates)
        expiresAt = try container.decodeTimestampIfPresent(forKey: .expiresAt)
        priority = try container.decodeIfPresent(NotificationPriority.self, forKey: .priority)
        collapseId = try container.decodeIfPresent(String.self, forKey: .collapseId)
        publishedAt = try container.decodeTimestampIfPresent(forKey: .publishedAt)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(id, forKey: .id)
        if case .expression(_, let source) = audience {
            try container.encode(source, forKey: .tags)
        }
        try container.encode(properties, forKey: .properties)
        if !native.isEmpty {
            var payloads: [String: JSONValue] = [:]
            for (platform, text) in native {
                payloads[platform.rawValue] = Self.nativeJSON(text)
            }
            try container.encode(payloads, forKey: .native)
        }
        try container.encodeIfPresent(templates, forKey: .templates)
        if let expiresAt { try container.encodeTimestamp(expiresAt, forKey: .expiresAt, precision: .secondsWhenExact) }
        try container.encodeIfPresent(priority, forKey: .priority)
        try container.encodeIfPresent(collapseId, forKey: .collapseId)
        if let publishedAt { try container.encodeTimestamp(publishedAt, forKey: .publishedAt) }
    }

    /// A stored native payload as JSON: objects are re-parsed, WNS XML stays a string.
    static func nativeJSON(_ text: String) -> JSONValue {
        if text.utf8.first == UInt8(ascii: "{"), let value = try? JSONValue.parse(text) {
            return value
        }
        return .string(text)
    }

    /// What makes two records with the same id the same event: the canonical JSON without
    /// `publishedAt` (a retry is published again, later). A reused id whose content differs
    /// is a conflict, not a retry.
    public func contentJSON() -> [UInt8] {
        var content = self
        content.publishedAt = nil
        return content.canonicalJSON()
    }

    /// The event as compact JSON in the contract's field order, with native payloads
    /// written byte for byte as stored. Decoding this with ``decode(_:limits:)`` gives the
    /// same event back.
    public func canonicalJSON() -> [UInt8] {
        var members: [JSONMember] = []
        if let id { members.append(JSONMember(key: "id", value: .string(id))) }
        if case .expression(_, let source) = audience { members.append(JSONMember(key: "tags", value: .string(source))) }
        members.append(
            JSONMember(
                key: "properties",
                value: .object(
                    properties.sorted { $0.key < $1.key }.map { JSONMember(key: $0.key, value: .string($0.value)) }
                )))
        if !native.isEmpty {
            members.append(
                JSONMember(
                    key: "native",
                    value: .object(
                        native.sorted { $0.key.rawValue < $1.key.rawValue }.map {
                            JSONMember(key: $0.key.rawValue, value: Self.nativeJSON($0.value))
                        }
                    )))
        }
        if let templates { members.append(JSONMember(key: "templates", value: .array(templates.map(JSONValue.string)))) }
        if let expiresAt {
            members.append(JSONMember(key: "expiresAt", value: .string(ISO8601Timestamp.format(expiresAt, precision: .secondsWhenExact))))
        }
        if let priority { members.append(JSONMember(key: "priority", value: .string(priority.rawValue))) }
        if let collapseId { members.append(JSONMember(key: "collapseId", value: .string(collapseId))) }
        if let publishedAt { members.append(JSONMember(key: "publishedAt", value: .string(ISO8601Timestamp.format(publishedAt)))) }
        var bytes: [UInt8] = []
        JSONValue.object(members).write(into: &bytes)
        return bytes
    }
}
