import Foundation
@testable import HeraldDomain
import PropertyBased
import Testing

@Suite("JSON reader and writer")
struct ModelJSONTests {
    @Test(
        "keeps member order and number text",
        arguments: [
            (#"{"b":1,"a":[true,false,null],"c":{"z":"x","y":1.50}}"#, #"{"b":1,"a":[true,false,null],"c":{"z":"x","y":1.50}}"#),
            (" [ 1 , -0.5e+3 , \"\\u00e9\\ud83d\\ude00\\n\" ] ", "[1,-0.5e+3,\"é😀\\n\"]"),
            (#""\/\b\f\t\u0001""#, #""/\b\f\t\u0001""#),
            ("{}", "{}"),
        ])
    func roundTrips(input: String, compact: String) throws {
        #expect(try JSONValue.parse(input).compactText() == compact)
    }

    @Test("sorting keys gives one text for reordered objects")
    func sortingKeys() throws {
        let a = try JSONValue.parse(#"{"b":{"y":1,"x":2},"a":0}"#)
        let b = try JSONValue.parse(#"{"a":0,"b":{"x":2,"y":1}}"#)
        #expect(a != b)
        #expect(a.compactText(sortingKeys: true) == b.compactText(sortingKeys: true))
        #expect(a.compactText(sortingKeys: true) == #"{"a":0,"b":{"x":2,"y":1}}"#)
    }

    @Test(
        "syntax errors carry code, line and column",
        arguments: [
            ("{\"a\": [1, x]}", "unexpected_character", 1, 11),
            ("{\n  \"a\": 1,\n  \"b\" 2\n}", "unexpected_character", 3, 7),
            ("{\"a\": \"open", "unexpected_end", 1, 7),
            ("[01]", "invalid_number", 1, 3),
            ("{\"a\":1} x", "trailing_content", 1, 9),
            ("", "unexpected_end", 1, 1),
            ("\"\\q\"", "invalid_string", 1, 3),
            ("\"\\ud800\"", "invalid_string", 1, 8),
            ("{\"a\":\"tab\there\"}", "invalid_string", 1, 10),
            ("[1,]", "unexpected_character", 1, 4),
        ])
    func syntaxErrors(input: String, code: String, line: Int, column: Int) {
        #expect {
            try JSONValue.parse(input)
        } throws: { error in
            guard let error = error as? JSONSyntaxError else { return false }
            return error.code == code && error.line == line && error.column == column
        }
    }

    @Test("refuses invalid UTF-8 and deep nesting")
    func hostileInput() {
        #expect(throws: JSONSyntaxError.self) { try JSONValue.parse([UInt8(ascii: "\""), 0xC3, 0x28, UInt8(ascii: "\"")]) }
        let deep = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect(throws: JSONSyntaxError.self) { try JSONValue.parse(deep) }
        #expect((try? JSONValue.parse(deep, maximumDepth: 100)) != nil)
    }

    @Test("any string survives writing and reading back")
    func stringRoundTrip() async {
        await propertyCheck(input: ModelGenerators.anyString) { text in
            let written = JSONValue.string(text).compactText()
            #expect((try? JSONValue.parse(written)) == .string(text))
        }
    }
}

enum ModelGenerators {
    /// Strings with a third of their scalars in ASCII (so quotes, backslashes and control
    /// characters come up often) and the rest anywhere in Unicode.
    static let anyString = Gen<UInt32>.value(in: 0...0x10FFFF)
        .map { value -> Character in
            let scalarValue = value % 3 == 0 ? value % 128 : value
            return Character(Unicode.Scalar(scalarValue) ?? "\u{FFFD}")
        }
        .string(of: 0...40)
}

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
