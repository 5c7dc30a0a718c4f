import Foundation

/// A wall-clock time without a zone or offset, such as `2026-11-25T07:30:00`: what
/// `sendAtLocal` names, to happen at that hour in each device's own time zone.
public struct LocalDateTime: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var year: Int
    public var month: Int
    public var day: Int
    public var hour: Int
    public var minute: Int
    public var second: Int

    public init(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int = 0) {
        self.year = year
        self.month = month
        self.day = day
        self.hour = hour
        self.minute = minute
        self.second = second
    }

    /// Parses `YYYY-MM-DDTHH:MM` or `YYYY-MM-DDTHH:MM:SS`; nil for anything else, an offset
    /// or `Z` included, and for dates that do not exist (`2026-02-30`).
    public static func parse(_ text: String) -> LocalDateTime? {
        let bytes = Array(text.utf8)
        guard bytes.count == 16 || bytes.count == 19 else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                let byte = bytes[index]
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        let separators: [(Int, Character)] = [(4, "-"), (7, "-"), (10, "T"), (13, ":")] + (bytes.count == 19 ? [(16, ":")] : [])
        for (index, character) in separators where bytes[index] != character.asciiValue! { return nil }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), let hour = number(11..<13),
            let minute = number(14..<16)
        else { return nil }
        let second = bytes.count == 19 ? number(17..<19) : 0
        guard let second, (1...12).contains(month), day >= 1, day <= Self.days(inMonth: month, year: year), hour < 24, minute < 60,
            second < 60
        else { return nil }
        return LocalDateTime(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
    }

    static func days(inMonth month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// `2026-11-25T07:30:00`.
    public var description: String {
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : String(value) }
        return "\(String(format: "%04d", year))-\(two(month))-\(two(day))T\(two(hour)):\(two(minute)):\(two(second))"
    }

    /// Seconds since 1970 as if this wall time were UTC: the reference every zone's offset
    /// is subtracted from.
    var naiveEpochSeconds: Int64 {
        // Days from civil (Howard Hinnant's algorithm).
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let m = Int64(month)
        let dayOfYear = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return days * 86_400 + Int64(hour) * 3_600 + Int64(minute) * 60 + Int64(second)
    }

    /// The instant this wall time happens in `zone`. When the clocks go back and it happens
    /// twice, the first; when they go forward over it, the instant the skipped time would
    /// have had on the old offset (02:30 in a gap from 02:00 to 03:00 becomes 03:30).
    public func instant(in zone: TimeZone) -> Date {
        let naive = naiveEpochSeconds
        // The offsets the zone uses within a day either side hold every candidate.
        let probes = [naive - 86_400, naive - 43_200, naive, naive + 43_200, naive + 86_400]
        let offsets = Set(probes.map { Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double($0)))) })
        let matches = offsets.map { naive - $0 }.filter {
            Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double($0)))) == naive - $0
        }
        if let first = matches.min() { return Date(timeIntervalSince1970: Double(first)) }
        // A gap: the offset in force before it (a day earlier) moves the time forward.
        let before = Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(naive - 86_400))))
        return Date(timeIntervalSince1970: Double(naive - before))
    }

    public static func < (lhs: LocalDateTime, rhs: LocalDateTime) -> Bool {
        lhs.naiveEpochSeconds < rhs.naiveEpochSeconds
    }
}
