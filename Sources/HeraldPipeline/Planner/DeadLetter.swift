import Crypto
import Foundation
import HeraldDomain
import HeraldKafka

/// A record a worker could not accept, as written to `herald.events.dlq`: a bad event, or
/// any record that failed for a reason that retrying cannot fix (`source.topic` says which
/// topic it came from).
///
/// The value is a JSON envelope (see docs/topics.md and schemas/dead-letter.schema.json);
/// the original bytes travel base64-encoded inside it, so the envelope is valid JSON
/// whatever the publisher sent (truncated UTF-8, binary). The reason code is repeated in a
/// header so tools can filter without parsing.
///
/// A dead letter must always be writable, so the envelope is bounded whatever the original:
/// an original over `maxInlineOriginalBytes` keeps only its first bytes, with its size and
/// SHA-256 so it can be found and matched at its source offset.
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
        self.init(
            reason: failure.issues.first?.code ?? "invalid_event", message: failure.description, issues: failure.issues,
            source: source, now: now
        )
    }

    /// A dead letter for `source` with a reason code and its explanation.
    public init(reason: String, message: String, issues: [ValidationIssue] = [], source: KafkaMessage, now: Date) {
        self.reason = reason
        self.message = message
        self.issues = issues
        self.eventId = Self.readableId(source.value)
        self.sourceTopic = source.topic
        self.sourcePartition = source.partition
        self.sourceOffset = source.offset
        self.sourceTimestamp = source.timestamp
        self.originalKey = source.key
        self.originalValue = source.value
        self.deadLetteredAt = now
    }

    /// Original bytes kept whole in the envelope; above this, the first bytes, size and hash.
    public static let maxInlineOriginalBytes = 65_536
    /// Issues listed in the envelope (the message says how many there were).
    static let maxIssues = 20
    /// Characters of the message kept.
    static let maxMessageCharacters = 4_096

    public static let reasonHeader = "herald-dlq-reason"
    public static let sourceHeader = "herald-dlq-source"

    /// The record for `herald.events.dlq`: same key as the original, envelope as value.
    public func outgoing(topic: String) -> KafkaOutgoingMessage {
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
            JSONMember(key: "message", value: .string(Self.clipped(message))),
            JSONMember(
                key: "issues",
                value: .array(
                    issues.prefix(Self.maxIssues).map { issue in
                        .object([
                            JSONMember(key: "field", value: .string(Self.clipped(issue.field))),
                            JSONMember(key: "code", value: .string(issue.code)),
                            JSONMember(key: "message", value: .string(Self.clipped(issue.message))),
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
        source.append(
            JSONMember(
                key: "key", value: originalKey.map { .string(Data($0.prefix(Self.maxInlineOriginalBytes)).base64EncodedString()) } ?? .null)
        )
        members.append(JSONMember(key: "source", value: .object(source)))
        members.append(
            JSONMember(
                key: "originalBase64",
                value: originalValue.map { .string(Data($0.prefix(Self.maxInlineOriginalBytes)).base64EncodedString()) } ?? .null))
        if let originalValue {
            members.append(JSONMember(key: "originalBytes", value: .number(String(originalValue.count))))
            members.append(JSONMember(key: "originalTruncated", value: .bool(originalValue.count > Self.maxInlineOriginalBytes)))
            let digest = SHA256.hash(data: originalValue).map { String($0, radix: 16).leftPadded(to: 2) }.joined()
            members.append(JSONMember(key: "originalSha256", value: .string(digest)))
        }
        members.append(JSONMember(key: "deadLetteredAt", value: .string(ISO8601Timestamp.format(deadLetteredAt))))
        var bytes: [UInt8] = []
        JSONValue.object(members).write(into: &bytes)
        return bytes
    }

    private static func clipped(_ text: String) -> String {
        text.count <= maxMessageCharacters ? text : String(text.prefix(maxMessageCharacters)) + "..."
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

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
