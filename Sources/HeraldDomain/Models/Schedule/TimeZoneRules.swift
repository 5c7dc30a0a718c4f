import Foundation

/// What a `timeZone` may be: a time zone name of the database's list (`Europe/Paris`,
/// `America/New_York`, `GMT`) or `UTC`, so every worker computes the same local times, and a
/// local-time schedule, which splits over exactly this list, reaches every device.
public enum TimeZoneRules {
    /// Every zone name accepted, sorted: what local-time schedules split over.
    public static let knownZones: [String] = Set(TimeZone.knownTimeZoneIdentifiers + ["UTC"])
        .filter { TimeZone(identifier: $0) != nil }.sorted()
    private static let known = Set(knownZones)

    /// Why `name` is not a usable time zone, or nil.
    public static func problem(_ name: String) -> String? {
        if name.isEmpty { return "a time zone cannot be empty; omit the field for the default zone" }
        if known.contains(name) { return nil }
        return "unknown time zone \"\(name)\"; use an IANA name such as \"Europe/Paris\" or \"America/New_York\""
    }

    /// The issue for a bad `timeZone` field, or nil.
    static func issue(_ name: String?, field: String) -> ValidationIssue? {
        guard let name, let problem = problem(name) else { return nil }
        return ValidationIssue(field: field, code: ValidationIssue.Code.invalidValue, message: problem)
    }
}
