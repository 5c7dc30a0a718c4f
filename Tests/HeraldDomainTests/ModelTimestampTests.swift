import Foundation
import PropertyBased
import Testing
@testable import HeraldDomain

@Suite("ISO-8601 timestamps")
struct ModelTimestampTests {
    @Test(
        "parses and formats back to milliseconds",
        arguments: [
            ("2026-11-21T18:00:00.120Z", "2026-11-21T18:00:00.120Z"),
            ("2026-11-21T18:00:00Z", "2026-11-21T18:00:00.000Z"),
            ("2026-11-21T18:00:00.1Z", "2026-11-21T18:00:00.100Z"),
            ("2026-11-21T18:00:00.123456789Z", "2026-11-21T18:00:00.123Z"),
            ("2026-11-21T19:00:00+01:00", "2026-11-21T18:00:00.000Z"),
            ("2026-11-21T17:30:00-0030", "2026-11-21T18:00:00.000Z"),
            ("2026-11-21t18:00:00z", "2026-11-21T18:00:00.000Z"),
            ("1970-01-01T00:00:00Z", "1970-01-01T00:00:00.000Z"),
            ("1969-12-31T23:59:59.999Z", "1969-12-31T23:59:59.999Z"),
            ("2024-02-29T12:00:00Z", "2024-02-29T12:00:00.000Z"),
            ("2000-03-01T00:00:00Z", "2000-03-01T00:00:00.000Z"),
            ("9999-12-31T23:59:59.999Z", "9999-12-31T23:59:59.999Z"),
        ])
    func parsesAndFormats(input: String, expected: String) throws {
        let date = try #require(ISO8601Timestamp.parse(input))
        #expect(ISO8601Timestamp.format(date) == expected)
    }

    @Test(
        "refuses what is not a timestamp",
        arguments: [
            "", "2026-11-21", "2026-11-21T18:00:00", "2026-13-01T00:00:00Z", "2026-02-29T00:00:00Z",
            "2026-11-21T24:00:00Z", "2026-11-21T18:60:00Z", "2026-11-21T18:00:00.Z", "2026-11-21T18:00:00Zjunk",
            "26-11-21T18:00:00Z", "2026-11-21T18:00:00+25:00", "tomorrow",
        ])
    func refusesInvalid(input: String) {
        #expect(ISO8601Timestamp.parse(input) == nil)
    }

    @Test("agrees with Foundation's formatter")
    func agreesWithFoundation() throws {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for milliseconds in [Int64(0), 1, 999, 1_795_370_400_120, 951_782_400_000, -1, -86_400_001, 4_102_444_800_000] {
            let date = ISO8601Timestamp.date(milliseconds: milliseconds)
            #expect(ISO8601Timestamp.format(date) == formatter.string(from: date))
        }
    }

    @Test("whole seconds are written without a fraction only when asked")
    func secondsWhenExact() {
        let whole = ModelFixtures.date("2026-11-21T19:00:00Z")
        let fractional = ModelFixtures.date("2026-11-21T19:00:00.5Z")
        #expect(ISO8601Timestamp.format(whole, precision: .secondsWhenExact) == "2026-11-21T19:00:00Z")
        #expect(ISO8601Timestamp.format(fractional, precision: .secondsWhenExact) == "2026-11-21T19:00:00.500Z")
        #expect(ISO8601Timestamp.format(whole) == "2026-11-21T19:00:00.000Z")
    }

    @Test("format then parse is the identity on milliseconds")
    func roundTrip() async {
        await propertyCheck(input: Gen.int64(in: -62_135_596_800_000...253_402_300_799_999)) { milliseconds in
            let date = ISO8601Timestamp.date(milliseconds: milliseconds)
            let parsed = ISO8601Timestamp.parse(ISO8601Timestamp.format(date))
            #expect(parsed.map(ISO8601Timestamp.milliseconds) == milliseconds)
        }
    }
}
