import Foundation
import HeraldDomain

/// JSON for `herald.status` values and `herald:status:<id>`: the domain's Codable shapes.
enum StatusCoding {
    /// Distinguishes the two kinds of `herald.status` values for consumers that do not
    /// want to sniff fields (`state` vs `taskIndex`).
    static let typeHeader = "herald-type"

    static func encode(_ record: StatusRecord) -> [UInt8] {
        Array((try? encoder.encode(record)) ?? Data())
    }

    static func encode(_ progress: TaskProgress) -> [UInt8] {
        Array((try? encoder.encode(progress)) ?? Data())
    }

    static func decodeStatus(_ bytes: [UInt8]) throws -> StatusRecord {
        try JSONDecoder().decode(StatusRecord.self, from: Data(bytes))
    }

    static func decodeProgress(_ bytes: [UInt8]) throws -> TaskProgress {
        try JSONDecoder().decode(TaskProgress.self, from: Data(bytes))
    }

    private static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return encoder
    }
}
