import PropertyBased
import Testing
@testable import HeraldDomain

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
