import Foundation
import HeraldDomain

/// One record of the events' dead-letter topic (`herald.events.dlq`), as the console lists it
/// and replays it: why the planner refused the record, where it came from, and the original.
public struct DeadLetterEntry: Sendable, Hashable {
    /// Where the dead letter is in its topic: the id a replay names.
    public var partition: Int32
    public var offset: Int64
    /// The hub the original names (the default hub when it names none or cannot be read).
    public var hub: HubName
    public var reason: String
    public var message: String
    /// The fields the refusal named, in order.
    public var fields: [String]
    public var eventId: String?
    public var sourceTopic: String
    public var sourcePartition: Int64?
    public var sourceOffset: Int64?
    public var deadLetteredAt: String?
    /// The original record's value, or its first `DeadLetter.maxInlineOriginalBytes` when
    /// `truncated`; nil for a record without a value.
    public var original: [UInt8]?
    public var truncated: Bool

    /// Reads a dead letter's JSON envelope; nil when it is not one.
    public init?(envelope: [UInt8], partition: Int32, offset: Int64) {
        guard let root = try? JSONValue.parse(envelope), case .string(let reason)? = root["reason"] else { return nil }
        self.partition = partition
        self.offset = offset
        self.reason = reason
        message = Self.string(root["message"]) ?? ""
        if case .array(let issues)? = root["issues"] { fields = issues.compactMap { Self.string($0["field"]) } } else { fields = [] }
        eventId = Self.string(root["eventId"])
        sourceTopic = Self.string(root["source"]?["topic"]) ?? ""
        sourcePartition = Self.integer(root["source"]?["partition"])
        sourceOffset = Self.integer(root["source"]?["offset"])
        deadLetteredAt = Self.string(root["deadLetteredAt"])
        original = Self.string(root["originalBase64"]).flatMap { Data(base64Encoded: $0) }.map { [UInt8]($0) }
        if case .bool(let flag)? = root["originalTruncated"] { truncated = flag } else { truncated = false }
        hub = .default
        if let original, !truncated, let event = try? JSONValue.parse(original), let name = Self.string(event["hub"]),
            let named = HubName(name)
        {
            hub = named
        }
    }

    /// The dead letter as the API answers it: the original as text when it is UTF-8 (its first
    /// `previewBytes`), else base64.
    public func json(previewBytes: Int = 4_096) -> JSONValue {
        var members = [
            JSONMember(key: "partition", value: .number(String(partition))),
            JSONMember(key: "offset", value: .number(String(offset))),
            JSONMember(key: "reason", value: .string(reason)),
            JSONMember(key: "message", value: .string(message)),
            JSONMember(key: "fields", value: .array(fields.map { .string($0) })),
            JSONMember(key: "eventId", value: eventId.map { .string($0) } ?? .null),
            JSONMember(
                key: "source",
                value: .object([
                    JSONMember(key: "topic", value: .string(sourceTopic)),
                    JSONMember(key: "partition", value: sourcePartition.map { .number(String($0)) } ?? .null),
                    JSONMember(key: "offset", value: sourceOffset.map { .number(String($0)) } ?? .null),
                ])),
            JSONMember(key: "deadLetteredAt", value: deadLetteredAt.map { .string($0) } ?? .null),
        ]
        if let original {
            let shown = Array(original.prefix(previewBytes))
            if let text = String(validating: shown, as: UTF8.self) {
                members.append(JSONMember(key: "original", value: .string(text)))
            } else {
                members.append(JSONMember(key: "originalBase64", value: .string(Data(shown).base64EncodedString())))
            }
            members.append(JSONMember(key: "originalBytes", value: .number(String(original.count))))
        }
        members.append(JSONMember(key: "truncated", value: .bool(truncated || (original?.count ?? 0) > previewBytes)))
        return .object(members)
    }

    private static func string(_ value: JSONValue?) -> String? {
        if case .string(let text)? = value { return text }
        return nil
    }

    private static func integer(_ value: JSONValue?) -> Int64? {
        if case .number(let text)? = value { return Int64(text) }
        return nil
    }
}

/// The events' dead letters, read from their topic: `GET /v1/deadletters` and its replay.
public protocol DeadLetterStore: Sendable {
    /// The dead letters of `hub`'s events, newest first, at most `limit`.
    func deadLetters(hub: HubName, limit: Int) async throws -> [DeadLetterEntry]
    /// The dead letter at `partition` and `offset`, when it is one of `hub`'s.
    func deadLetter(partition: Int32, offset: Int64, hub: HubName) async throws -> DeadLetterEntry?
    /// The topic events are published to (a replay's original must come from it).
    var eventsTopic: String { get }
}
