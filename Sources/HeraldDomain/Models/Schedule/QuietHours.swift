import Foundation

/// A device's quiet hours, such as `22:00-07:00`: wall-clock times in the device's own time
/// zone (its `timeZone`, else the deployment's default). A non-breaking alert that finds the
/// device within them is held until they end, or dropped when the event says so
/// (`QuietHoursPolicy`). The window starts at `start` and ends at `end`, `end` excluded; it
/// spans midnight when `end` is earlier than `start`.
///
/// The index keeps them as the system tag `$QuietHours:{22:00-07:00}` (and `$QuietHours:{any}`
/// on every registration that has some), so the fan-out reads them from a view's tags.
public struct QuietHours: Sendable, Hashable, CustomStringConvertible {
    /// Minutes since midnight.
    public var start: Int
    public var end: Int

    public init?(start: Int, end: Int) {
        guard (0..<1_440).contains(start), (0..<1_440).contains(end), start != end else { return nil }
        self.start = start
        self.end = end
    }

    /// Reads `HH:MM-HH:MM` (24-hour clock); nil for anything else, and for an empty window.
    public init?(_ text: some StringProtocol) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let start = Self.minutes(parts[0]), let end = Self.minutes(parts[1]) else { return nil }
        self.init(start: start, end: end)
    }

    /// `22:00-07:00`.
    public var description: String { Self.clock(start) + "-" + Self.clock(end) }

    /// The system tag the index derives from them.
    public var tag: String { Self.tagPrefix + "{" + description + "}" }

    public static let tagPrefix = "$QuietHours:"
    /// On every registration with quiet hours: what a release of held alerts narrows its
    /// audience to.
    public static let anyTag = tagPrefix + "{any}"
    /// The tags of a registration with `quietHours`.
    public static func tags(_ quietHours: String) -> [String] { [tagPrefix + "{" + quietHours + "}", anyTag] }

    /// The quiet hours named by a view's tag bytes (`$QuietHours:{22:00-07:00}`), nil for any
    /// other tag and for `{any}`.
    public static func fromTag(_ tag: some StringProtocol) -> QuietHours? {
        TagRules.systemTagValue(tag, prefix: tagPrefix).flatMap { QuietHours($0) }
    }

    /// When the quiet hours that contain `instant` end, in `zone`; nil when `instant` is
    /// outside them. Wall-clock arithmetic in the zone: on a day the clocks change, the window
    /// still starts and ends at its wall times (an end inside a skipped hour moves as
    /// `LocalDateTime.instant(in:)` says).
    public func end(ifQuietAt instant: Date, in zone: TimeZone) -> Date? {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: instant)
        guard let year = parts.year, let month = parts.month, let day = parts.day, let hour = parts.hour, let minute = parts.minute
        else { return nil }
        let now = hour * 60 + minute
        let quiet = start < end ? (now >= start && now < end) : (now >= start || now < end)
        guard quiet else { return nil }
        // The end is today, unless the window spans midnight and it is not past midnight yet.
        var endDay = LocalDateTime(year: year, month: month, day: day, hour: end / 60, minute: end % 60)
        if start > end && now >= start {
            let tomorrow = calendar.date(byAdding: .day, value: 1, to: instant) ?? instant.addingTimeInterval(86_400)
            let next = calendar.dateComponents([.year, .month, .day], from: tomorrow)
            endDay = LocalDateTime(
                year: next.year ?? year, month: next.month ?? month, day: next.day ?? day, hour: end / 60, minute: end % 60)
        }
        return endDay.instant(in: zone)
    }

    /// An issue when `text` is set and is not quiet hours.
    static func issue(_ text: String?, field: String) -> ValidationIssue? {
        guard let text, QuietHours(text) == nil else { return nil }
        return ValidationIssue(
            field: field, code: ValidationIssue.Code.invalidValue,
            message: "\"\(text)\" is not quiet hours; write start-end on the 24-hour clock, e.g. 22:00-07:00 (start and end differ)")
    }

    private static func minutes(_ text: some StringProtocol) -> Int? {
        let bytes = Array(text.utf8)
        guard bytes.count == 5, bytes[2] == UInt8(ascii: ":") else { return nil }
        let digits = [bytes[0], bytes[1], bytes[3], bytes[4]].map { Int($0) - Int(UInt8(ascii: "0")) }
        guard digits.allSatisfy({ (0...9).contains($0) }) else { return nil }
        let hour = digits[0] * 10 + digits[1]
        let minute = digits[2] * 10 + digits[3]
        guard hour < 24, minute < 60 else { return nil }
        return hour * 60 + minute
    }

    private static func clock(_ minutes: Int) -> String {
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : String(value) }
        return two(minutes / 60) + ":" + two(minutes % 60)
    }
}

/// What an event does with a device in its quiet hours (`quietHours` in the event; breaking
/// alerts are not held back unless their hub says so).
public enum QuietHoursPolicy: String, Sendable, Hashable, Codable, CaseIterable {
    /// The default: the device gets the alert when its quiet hours end (a release the
    /// scheduler makes); counted as skipped `held_quiet` in the event's own status.
    case hold
    /// The device does not get it; counted as skipped `skipped_quiet`.
    case drop

    public var skipReason: String { self == .hold ? "held_quiet" : "skipped_quiet" }
}

/// A release of alerts held for quiet hours: the event again, at `releaseAt`, for the devices
/// whose quiet hours held it at `heldAt` and end at `releaseAt` (`QuietHours.end(ifQuietAt:in:)`).
public struct QuietRelease: Sendable, Hashable, Codable {
    public var heldAt: Date
    public var releaseAt: Date

    public init(heldAt: Date, releaseAt: Date) {
        self.heldAt = heldAt
        self.releaseAt = releaseAt
    }

    enum CodingKeys: String, CodingKey { case heldAt, releaseAt }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        heldAt = try container.decodeTimestamp(forKey: .heldAt)
        releaseAt = try container.decodeTimestamp(forKey: .releaseAt)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeTimestamp(heldAt, forKey: .heldAt)
        try container.encodeTimestamp(releaseAt, forKey: .releaseAt)
    }

    /// The id of the release of `eventId` at `releaseAt` (`<id>#quiet-<seconds since 1970>`): one
    /// per event and instant, whichever task found the devices (each writes the same schedule).
    public static func eventId(of eventId: String, releaseAt: Date) -> String {
        "\(eventId)#quiet-\(Int64(releaseAt.timeIntervalSince1970))"
    }

    /// The id of the event a release (`<id>#quiet-<seconds>`) holds devices of; nil for any other id.
    public static func originalEventId(of releaseId: String) -> String? {
        guard let marker = releaseId.range(of: "#quiet-", options: .backwards) else { return nil }
        let seconds = releaseId[marker.upperBound...]
        guard !seconds.isEmpty, seconds.allSatisfy({ $0.isASCII && $0.isNumber }), marker.lowerBound > releaseId.startIndex else {
            return nil
        }
        return String(releaseId[..<marker.lowerBound])
    }

    /// Quiet hours end within a day of the moment they held a device: an event completed
    /// longer ago than this has no release still to come.
    public static let longestHold: TimeInterval = 86_400
}
