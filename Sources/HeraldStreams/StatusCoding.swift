import Foundation
import HeraldDomain
import HeraldKafka

/// JSON for `herald.status` values and `herald:status:<id>`: the domain's Codable shapes.
package enum StatusCoding {
    /// Distinguishes the two kinds of `herald.status` values for consumers that do not
    /// want to sniff fields (`state` vs `taskIndex`).
    package static let typeHeader = "herald-type"
    /// On status records of planned events: the event's de-duplication claim
    /// (`<partition>:<offset>:<fingerprint>`), so `herald reindex` can rebuild the claims from
    /// the log. Carried by the `accepted`/`expired` record and again by the final one, which is
    /// the one compaction keeps.
    package static let claimHeader = "herald-claim"

    /// The `herald.status` record of `record` (key: the event id, `<hub>/<id>` outside the
    /// default hub), with the event's claim when
    /// the writer knows it.
    package static func message(_ record: StatusRecord, topic: String, claim: String? = nil) -> KafkaOutgoingMessage {
        message(record, encoded: encode(record), topic: topic, claim: claim)
    }

    /// The same, with the record's JSON (`encode`) already made.
    package static func message(_ record: StatusRecord, encoded: [UInt8], topic: String, claim: String? = nil) -> KafkaOutgoingMessage {
        var headers = [KafkaHeader(key: typeHeader, value: Kind.status.rawValue)]
        if let claim { headers.append(KafkaHeader(key: claimHeader, value: claim)) }
        return KafkaOutgoingMessage(
            topic: topic, key: Array(record.hub.recordKey(record.eventId).utf8), value: encoded, headers: headers)
    }

    /// The `herald.status` record of a task's `progress` (key: as for its event's status).
    package static func message(_ progress: TaskProgress, hub: HubName, topic: String) -> KafkaOutgoingMessage {
        KafkaOutgoingMessage(
            topic: topic, key: Array(hub.recordKey(progress.eventId).utf8), value: encode(progress),
            headers: [KafkaHeader(key: typeHeader, value: Kind.progress.rawValue)])
    }

    /// What a `herald.status` record holds, by its `typeHeader`.
    package enum Kind: String {
        case status, progress
    }

    /// A decoded `herald.status` record.
    package enum Decoded {
        case status(StatusRecord)
        case progress(TaskProgress)
    }

    /// Decodes `message` as its `typeHeader` says; nil for a record of another kind, without a
    /// value, or that does not decode.
    package static func decode(_ message: KafkaMessage) -> Decoded? {
        guard let value = message.value,
            let header = message.headers.first(where: { $0.key == typeHeader })?.value,
            let kind = Kind(rawValue: String(decoding: header, as: UTF8.self))
        else { return nil }
        switch kind {
        case .status: return (try? decodeStatus(value)).map(Decoded.status)
        case .progress: return (try? decodeProgress(value)).map(Decoded.progress)
        }
    }

    package static func encode(_ record: StatusRecord) -> [UInt8] {
        Array((try? encoder.encode(record)) ?? Data())
    }

    package static func encode(_ progress: TaskProgress) -> [UInt8] {
        Array((try? encoder.encode(progress)) ?? Data())
    }

    package static func decodeStatus(_ bytes: [UInt8]) throws -> StatusRecord {
        try JSONDecoder().decode(StatusRecord.self, from: Data(bytes))
    }

    package static func decodeProgress(_ bytes: [UInt8]) throws -> TaskProgress {
        try JSONDecoder().decode(TaskProgress.self, from: Data(bytes))
    }

    private static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        // Sorted keys: the same record always has the same bytes, on the topic and in Redis, so
        // a rebuilt status can be compared byte for byte (JSONEncoder's order is not stable).
        encoder.outputFormatting = [.withoutEscapingSlashes, .sortedKeys]
        return encoder
    }
}
