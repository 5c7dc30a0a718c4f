import Foundation
import HeraldDomain
import HeraldKafka

/// A `herald.events` record the planner could not accept, as written to `herald.events.dlq`.
///
/// The value is a JSON envelope (see docs/topics.md and schemas/dead-letter.schema.json);
/// the original bytes travel base64-encoded inside it, so the envelope is valid JSON
/// whatever the publisher sent (truncated UTF-8, binary). The reason code is repeated in a
/// header so tools can filter without parsing.
public struct DeadLetter: Sendable, Hashable {
    /// Stable code: the first validation issue's code (`malformed_json`, `invalid_tag_expression`,
    /// `empty_tags`, `invalid_type`, `too_large`, ...) or `empty_record` for a null value.
    public var reason: String
    /// Every problem found, one per line.
    public var message: String
    public var issues: [ValidationIssue]
    /// The event id when the bytes were readable enough to have one.
    public var eventId: String?
    public var sourceTopic: String
    public var sourcePartition: Int32
    public var sourceOffset: Int64
    public var sourceTimestamp: Date?
    public var originalKey: [UInt8]?
    public var originalValue: [UInt8]?
    public var deadLetteredAt: Date

    public init(failure: ValidationFailure, message source: KafkaMessage, now: Date) {
        self.reason = failure.issues.first?.code ?? "invalid_event"
        self.message = failure.description
        self.issues = failure.issues
        self.eventId = Self.readableId(source.value)
        self.sourceTopic = source.topic
        self.sourcePartition = source.partition
        self.sourceOffset = source.offset
        self.sourceTimestamp = source.timestamp
        self.originalKey = source.key
        self.originalValue = source.value
        self.deadLetteredAt = now
    }

    public static let reasonHeader = "herald-dlq-reason"
    public static let sourceHeader = "herald-dlq-source"

    /// The record for `herald.events.dlq`: same key as the original, envelope as value.
    func outgoing(topic: String) -> KafkaOutgoingMessage {
        KafkaOutgoingMessage(
            topic: topic, key: originalKey, value: envelope(),
            headers: [
                KafkaHeader(key: Self.reasonHeader, value: reason),
                KafkaHeader(key: Self.sourceHeader, value: "\(sourceTopic)/\(sourcePartition)/\(sourceOffset)"),
            ]
        )
    }

    /// The JSON envelope.
    public func envelope() -> [UInt8] {
        var members: [JSONMember] = [
            JSONMember(key: "reason", value: .string(reason)),
            JSONMember(key: "message", value: .string(message)),
            JSONMember(key: "issues", value: .array(issues.map { issue in
                .object([
                    JSONMember(key: "field", value: .string(issue.field)),
                    JSONMember(key: "code", value: .string(issue.code)),
                    JSONMember(key: "message", value: .string(issue.message)),
                ])
            })),
            JSONMember(key: "eventId", value: eventId.map(JSONValue.string) ?? .null),
        ]
        var source: [JSONMember] = [
            JSONMember(key: "topic", value: .string(sourceTopic)),
            JSONMember(key: "partition", value: .number(String(sourcePartition))),
            JSONMember(key: "offset", value: .number(String(sourceOffset))),
            JSONMember(key: "timestamp", value: sourceTimestamp.map { .string(ISO8601Timestamp.format($0)) } ?? .null),
        ]
        source.append(JSONMember(key: "key", value: originalKey.map { .string(Data($0).base64EncodedString()) } ?? .null))
        members.append(JSONMember(key: "source", value: .object(source)))
        members.append(JSONMember(key: "originalBase64", value: originalValue.map { .string(Data($0).base64EncodedString()) } ?? .null))
        members.append(JSONMember(key: "deadLetteredAt", value: .string(ISO8601Timestamp.format(deadLetteredAt))))
        var bytes: [UInt8] = []
        JSONValue.object(members).write(into: &bytes)
        return bytes
    }

    /// The `id` of a JSON object that failed validation, if it is itself a valid id: lets
    /// the planner report `rejected` for that id.
    static func readableId(_ value: [UInt8]?) -> String? {
        guard let value, value.count <= EventLimits.default.maxBytes,
              let root = try? JSONValue.parse(value), case .string(let id)? = root["id"],
              IdentifierRules.eventIdProblem(id) == nil
        else { return nil }
        return id
    }
}
