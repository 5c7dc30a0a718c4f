import Foundation

/// Trusted copies of a validated event (inside fan-out tasks) travel as the contract's JSON:
/// encoded as ``canonicalJSON()`` is, decoded by the same field reader as untrusted events
/// (``decode(_:limits:)``) with ``EventLimits/trusted``, so there is one reader of the shape.
/// Re-validating a copy costs microseconds per task; a second, lenient decoder would be a
/// second definition of the event to keep in step.
extension NotificationEvent: Codable {
    public init(from decoder: any Decoder) throws {
        do {
            self = try Self.decode(try JSONValue(from: decoder), limits: .trusted)
        } catch let failure as ValidationFailure {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(codingPath: decoder.codingPath, debugDescription: "invalid event: \(failure)"))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        try canonicalValue().encode(to: encoder)
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
        var bytes: [UInt8] = []
        canonicalValue().write(into: &bytes)
        return bytes
    }

    /// The canonical JSON as a value, members in the contract's order.
    func canonicalValue() -> JSONValue {
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
        return .object(members)
    }
}
