import Foundation

/// ISO-8601 timestamps as Herald writes them on every topic: UTC, `Z`, and (by default)
/// exactly three fractional digits, for example `2026-11-21T18:00:00.120Z`.
///
/// Formatting is done by hand from the integer millisecond count because records are
/// written a million times per broadcast: a `DateFormatter` or `ISO8601DateFormatter` per
/// call would dominate the encoder, and a shared one is neither fast nor `Sendable`.
/// Parsing accepts any number of fractional digits and a `Z` or `±hh:mm` offset.
public enum ISO8601Timestamp {
    /// How many fractional digits to write.
    public enum Precision: Sendable, Hashable {
        /// Always three digits (`18:00:00.000Z`); used for `publishedAt`, `renderedAt` and timings.
        case milliseconds
        /// Whole seconds when the instant has no sub-second part (`19:00:00Z`), three digits
        /// otherwise; used for user-supplied instants such as `expiresAt`, so they come back
        /// as they were written.
        case secondsWhenExact
    }

    /// Milliseconds since 1970 (rounded to the nearest millisecond, so a value parsed from
    /// text formats back to the same text despite `Double` representation error).
    @inlinable
    public static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    /// The instant `milliseconds` after 1970-01-01T00:00:00Z.
    @inlinable
    public static func date(milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }

    /// `date` as text, for example `2026-11-21T18:00:00.120Z`.
    public static func format(_ date: Date, precision: Precision = .milliseconds) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        append(date, precision: precision, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `date` as ISO-8601 text (without quotes) to `bytes`.
    public static func append(_ date: Date, precision: Precision = .milliseconds, to bytes: inout [UInt8]) {
        let totalMilliseconds = milliseconds(date)
        var days = totalMilliseconds / 86_400_000
        var millisecondOfDay = totalMilliseconds % 86_400_000
        if millisecondOfDay < 0 {
            millisecondOfDay += 86_400_000
            days -= 1
        }
        let (year, month, day) = civilDate(daysSinceEpoch: days)
        let secondOfDay = millisecondOfDay / 1000
        let millisecond = millisecondOfDay % 1000

        if year < 0 || year > 9999 {
            // Outside what four digits can say; ISO-8601's expanded form keeps it exact.
            bytes.append(year < 0 ? UInt8(ascii: "-") : UInt8(ascii: "+"))
            appendDigits(abs(year), count: 6, to: &bytes)
        } else {
            appendDigits(year, count: 4, to: &bytes)
        }
        bytes.append(UInt8(ascii: "-"))
        appendDigits(month, count: 2, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        appendDigits(day, count: 2, to: &bytes)
        bytes.append(UInt8(ascii: "T"))
        appendDigits(secondOfDay / 3600, count: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        appendDigits(secondOfDay / 60 % 60, count: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        appendDigits(secondOfDay % 60, count: 2, to: &bytes)
        if precision == .milliseconds || millisecond != 0 {
            bytes.append(UInt8(ascii: "."))
            appendDigits(millisecond, count: 3, to: &bytes)
        }
        bytes.append(UInt8(ascii: "Z"))
    }

    /// Parses `YYYY-MM-DDThh:mm:ss[.fraction](Z|±hh:mm)`; `nil` when `text` is not such a
    /// timestamp or names an impossible date (month 13, February 30, hour 24).
    public static func parse(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { parse(bytes: $0) }
    }

    static func parse(bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        var index = 0
        func number(_ count: Int) -> Int? {
            guard index + count <= bytes.count else { return nil }
            var value = 0
            for offset in 0..<count {
                let byte = bytes[index + offset]
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            index += count
            return value
        }
        func expect(_ characters: UInt8...) -> Bool {
            guard index < bytes.count, characters.contains(bytes[index]) else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect(UInt8(ascii: "-")),
            let month = number(2), expect(UInt8(ascii: "-")),
            let day = number(2), expect(UInt8(ascii: "T"), UInt8(ascii: "t"), UInt8(ascii: " ")),
            let hour = number(2), expect(UInt8(ascii: ":")),
            let minute = number(2), expect(UInt8(ascii: ":")),
            let second = number(2)
        else { return nil }
        guard (1...12).contains(month), day >= 1, day <= daysInMonth(month, year: year),
            hour < 24, minute < 60, second < 61  // 60 = leap second, folded into the next minute
        else { return nil }

        var nanoseconds: Int64 = 0
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") || bytes[index] == UInt8(ascii: ",") {
            index += 1
            var digits = 0
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                if digits < 9 { nanoseconds = nanoseconds * 10 + Int64(bytes[index] - UInt8(ascii: "0")) }
                digits += 1
                index += 1
            }
            guard digits > 0 else { return nil }
            for _ in min(digits, 9)..<9 { nanoseconds *= 10 }
        }

        var offsetSeconds = 0
        guard index < bytes.count else { return nil }
        switch bytes[index] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            index += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            let sign = bytes[index] == UInt8(ascii: "-") ? -1 : 1
            index += 1
            guard let offsetHours = number(2) else { return nil }
            _ = expect(UInt8(ascii: ":"))
            guard let offsetMinutes = number(2), offsetHours < 24, offsetMinutes < 60 else { return nil }
            offsetSeconds = sign * (offsetHours * 3600 + offsetMinutes * 60)
        default:
            return nil
        }
        guard index == bytes.count else { return nil }

        let days = daysSinceEpoch(year: year, month: month, day: day)
        let seconds = Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + second - offsetSeconds)
        if nanoseconds % 1_000_000 == 0 {
            return date(milliseconds: seconds * 1000 + nanoseconds / 1_000_000)
        }
        return Date(timeIntervalSince1970: Double(seconds) + Double(nanoseconds) / 1e9)
    }

    // MARK: Calendar arithmetic (proleptic Gregorian, after H. Hinnant's civil-date algorithms)

    static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int64 {
        let shiftedYear = Int64(month <= 2 ? year - 1 : year)
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let monthFromMarch = Int64(month > 2 ? month - 3 : month + 9)
        let dayOfYear = (153 * monthFromMarch + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func civilDate(daysSinceEpoch days: Int64) -> (year: Int, month: Int, day: Int) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
        let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (Int(year), Int(month), Int(day))
    }

    static func daysInMonth(_ month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    @inline(__always)
    static func appendDigits(_ value: some BinaryInteger, count: Int, to bytes: inout [UInt8]) {
        var divisor = 1
        for _ in 1..<count { divisor *= 10 }
        var remaining = Int(value)
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(remaining / divisor % 10))
            remaining %= divisor
            divisor /= 10
        }
    }
}

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
