/// What a tag may look like, shared by registrations (which carry tags) and tag expressions
/// (which name them).
///
/// A plain tag is 1...120 characters of `A-Z a-z 0-9 _ @ # . : -`, Azure Notification Hubs'
/// alphabet. Tags are case-sensitive.
///
/// Two system tags address one installation or one user:
/// `$InstallationId:{id}` and `$UserId:{id}`. A third, `$TimeZone:{zone}`, is never written by
/// clients: the index gives it to registrations with a `timeZone` (`$TimeZone:{Europe/Paris}`,
/// and `$TimeZone:{any}` to every registration that has a zone), so expressions and local-time
/// schedules can address the devices of a zone; nor is a fourth, `$QuietHours:{22:00-07:00}`
/// (and `$QuietHours:{any}`), from a registration's `quietHours`, or a fifth, `$FrequencyCap:{n}`,
/// from its `frequencyCap`. The prefix is case-sensitive and the id is one or
/// more characters of `A-Z a-z 0-9 _ @ # . : - + = / ~ %`: enough for GUIDs, e-mail addresses
/// (`$UserId:{alice+news@example.com}`), base64 and percent-encoded ids. Whitespace, braces,
/// quotes, commas, `$` and the expression operators `! & | ( )` are never allowed, so a system
/// tag is always one token in an expression. The 120-character limit counts the whole tag,
/// prefix and braces included.
public enum TagRules {
    /// Longest tag, in characters (every valid tag is ASCII, so also in bytes).
    public static let maxLength = 120

    /// The system-tag prefixes, each followed by `{id}`.
    public static let installationIdPrefix = "$InstallationId:"
    public static let userIdPrefix = "$UserId:"
    public static let timeZonePrefix = "$TimeZone:"
    /// What every registration with a `timeZone` also carries (no IANA zone is called `any`).
    public static let anyTimeZoneTag = "$TimeZone:{any}"

    /// Human-readable alphabets, used in error messages and docs.
    public static let tagAlphabet = "A-Z a-z 0-9 _ @ # . : -"
    public static let systemIdAlphabet = "A-Z a-z 0-9 _ @ # . : - + = / ~ %"

    /// Why `tag` is not a valid tag, or `nil` when it is one.
    public static func problem(with tag: String) -> String? {
        problem(with: tag, maxLength: maxLength)
    }

    /// Whether `tag` is a well-formed `$InstallationId:{id}` or `$UserId:{id}` tag.
    public static func isSystemTag(_ tag: String) -> Bool {
        tag.utf8.first == TagAlphabet.dollar && problem(with: tag) == nil
    }

    /// The system tag that addresses one installation, e.g. `$InstallationId:{42}`.
    public static func installationIdTag(_ id: String) -> String { "\(installationIdPrefix){\(id)}" }

    /// The system tag that addresses one user, e.g. `$UserId:{alice@example.com}`.
    public static func userIdTag(_ id: String) -> String { "\(userIdPrefix){\(id)}" }

    /// The system tags the index gives a registration in `zone`: `$TimeZone:{zone}` and
    /// ``anyTimeZoneTag``.
    public static func timeZoneTags(_ zone: String) -> [String] { ["\(timeZonePrefix){\(zone)}", anyTimeZoneTag] }

    /// The value of a system tag with `prefix` (`Europe/Paris` of `$TimeZone:{Europe/Paris}`),
    /// nil for any other tag.
    public static func systemTagValue<Text: StringProtocol>(_ tag: Text, prefix: String) -> Text.SubSequence? {
        guard tag.hasPrefix(prefix + "{"), tag.hasSuffix("}") else { return nil }
        return tag.dropFirst(prefix.count + 1).dropLast()
    }

    static func problem(with tag: String, maxLength: Int) -> String? {
        let bytes = Array(tag.utf8)
        if bytes.isEmpty { return "tag is empty" }
        if bytes.count > maxLength {
            return "tag is \(tag.count) characters long; at most \(maxLength) are allowed"
        }
        if bytes[0] == TagAlphabet.dollar {
            switch TagAlphabet.scanSystemTag(bytes, from: 0) {
            case .problem(let offset, let message):
                return "\(message) (at position \(TextPosition.column(ofByteOffset: offset, in: bytes)))"
            case .tag(let end):
                if end == bytes.count { return nil }
                return "unexpected text after the system tag at position \(TextPosition.column(ofByteOffset: end, in: bytes))"
            }
        }
        for (offset, byte) in bytes.enumerated() where !TagAlphabet.isTagByte(byte) {
            let position = TextPosition.column(ofByteOffset: offset, in: bytes)
            return
                "character \(TextPosition.describeCharacter(atByteOffset: offset, in: bytes)) at position \(position) is not allowed in a tag (allowed: \(tagAlphabet), or a system tag $InstallationId:{id} / $UserId:{id})"
        }
        return nil
    }
}

/// Byte-level classification shared by `TagRules` and the expression lexer, which both work on
/// UTF-8 so that validating a tag never decodes grapheme clusters.
enum TagAlphabet {
    static let dollar = UInt8(ascii: "$")
    static let openBrace = UInt8(ascii: "{")
    static let closeBrace = UInt8(ascii: "}")

    static let installationIdOpening = Array("\(TagRules.installationIdPrefix){".utf8)
    static let userIdOpening = Array("\(TagRules.userIdPrefix){".utf8)
    static let timeZoneOpening = Array("\(TagRules.timeZonePrefix){".utf8)
    static let quietHoursOpening = Array("\(QuietHours.tagPrefix){".utf8)
    static let frequencyCapOpening = Array("\(FrequencyCap.tagPrefix){".utf8)

    @inline(__always)
    static func isTagByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "_"), UInt8(ascii: "@"), UInt8(ascii: "#"), UInt8(ascii: "."),
            UInt8(ascii: ":"), UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }

    @inline(__always)
    static func isSystemIdByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "+"), UInt8(ascii: "="), UInt8(ascii: "/"), UInt8(ascii: "~"), UInt8(ascii: "%"):
            return true
        default:
            return isTagByte(byte)
        }
    }

    enum SystemTagScan: Equatable {
        /// A well-formed system tag ends just before `end`.
        case tag(end: Int)
        case problem(offset: Int, message: String)
    }

    /// Scans a system tag starting at `start`, where `bytes[start]` is `$`.
    static func scanSystemTag(_ bytes: [UInt8], from start: Int) -> SystemTagScan {
        var idStart = start
        if hasPrefix(installationIdOpening, in: bytes, at: start) {
            idStart = start + installationIdOpening.count
        } else if hasPrefix(userIdOpening, in: bytes, at: start) {
            idStart = start + userIdOpening.count
        } else if hasPrefix(timeZoneOpening, in: bytes, at: start) {
            idStart = start + timeZoneOpening.count
        } else if hasPrefix(quietHoursOpening, in: bytes, at: start) {
            idStart = start + quietHoursOpening.count
        } else if hasPrefix(frequencyCapOpening, in: bytes, at: start) {
            idStart = start + frequencyCapOpening.count
        } else {
            return .problem(
                offset: start,
                message:
                    "'$' may only begin a system tag, $InstallationId:{id}, $UserId:{id}, $TimeZone:{zone}, $QuietHours:{hours} or $FrequencyCap:{n}"
            )
        }
        var index = idStart
        while index < bytes.count, isSystemIdByte(bytes[index]) { index += 1 }
        guard index < bytes.count else {
            return .problem(offset: index, message: "system tag is missing its closing '}'")
        }
        if bytes[index] != closeBrace {
            let character = TextPosition.describeCharacter(atByteOffset: index, in: bytes)
            return .problem(
                offset: index,
                message: "character \(character) is not allowed in a system tag id (allowed: \(TagRules.systemIdAlphabet))"
            )
        }
        if index == idStart {
            return .problem(offset: index, message: "system tag has an empty id")
        }
        return .tag(end: index + 1)
    }

    private static func hasPrefix(_ prefix: [UInt8], in bytes: [UInt8], at start: Int) -> Bool {
        guard bytes.count - start >= prefix.count else { return false }
        for (offset, byte) in prefix.enumerated() where bytes[start + offset] != byte { return false }
        return true
    }
}
