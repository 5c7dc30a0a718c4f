import Foundation

/// Timestamps in `Codable` types are written with ``ISO8601Timestamp`` whatever the
/// encoder's date strategy, so every topic carries the same text form.
extension KeyedEncodingContainer {
    mutating func encodeTimestamp(_ date: Date, forKey key: Key, precision: ISO8601Timestamp.Precision = .milliseconds) throws {
        try encode(ISO8601Timestamp.format(date, precision: precision), forKey: key)
    }

    /// Writes `null` for `nil`, so optional instants are always present in the output.
    mutating func encodeTimestamp(_ date: Date?, forKey key: Key, precision: ISO8601Timestamp.Precision = .milliseconds) throws {
        if let date {
            try encodeTimestamp(date, forKey: key, precision: precision)
        } else {
            try encodeNil(forKey: key)
        }
    }
}

extension KeyedDecodingContainer {
    func decodeTimestamp(forKey key: Key) throws -> Date {
        let text = try decode(String.self, forKey: key)
        guard let date = ISO8601Timestamp.parse(text) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: "\"\(text)\" is not an ISO-8601 timestamp")
        }
        return date
    }

    func decodeTimestampIfPresent(forKey key: Key) throws -> Date? {
        guard let text = try decodeIfPresent(String.self, forKey: key) else { return nil }
        guard let date = ISO8601Timestamp.parse(text) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: "\"\(text)\" is not an ISO-8601 timestamp")
        }
        return date
    }
}
