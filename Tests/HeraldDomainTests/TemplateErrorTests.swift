import HeraldDomain
import Testing

/// One row of the error table: where the compiler must point, and with which code.
struct TemplateErrorCase: Sendable, CustomTestStringConvertible {
    var name: String
    var format: TemplateFormat
    var body: String
    var code: TemplateError.Code
    var line: Int
    var column: Int

    init(_ name: String, _ format: TemplateFormat, _ body: String, _ code: TemplateError.Code, line: Int = 1, column: Int) {
        self.name = name
        self.format = format
        self.body = body
        self.code = code
        self.line = line
        self.column = column
    }

    var testDescription: String { name }
}

@Suite("Template errors")
struct TemplateErrorTests {
    static let cases: [TemplateErrorCase] = [
        // expressions
        TemplateErrorCase("unclosed $(", .json, ##"{"a":"$(title"}"##, .unclosedExpression, column: 7),
        TemplateErrorCase("unclosed $( after a length", .json, ##"{"a":"$(title, 20"}"##, .unclosedExpression, column: 7),
        TemplateErrorCase("unclosed in longer text", .json, ##"{"a":"Hi $(title"}"##, .unclosedExpression, column: 10),
        TemplateErrorCase("unclosed default", .json, ##"{"a":"$(t:{none)"}"##, .unclosedExpression, column: 11),
        TemplateErrorCase("nothing after '|'", .json, ##"{"a":"$(fr | )"}"##, .invalidPropertyName, column: 14),
        TemplateErrorCase("a bad name after '|'", .json, ##"{"a":"$(fr | en-GB)"}"##, .invalidPropertyName, column: 16),
        TemplateErrorCase("unclosed chain", .json, ##"{"a":"$(fr |"}"##, .unclosedExpression, column: 7),
        TemplateErrorCase("'|' after the default", .json, ##"{"a":"$(fr:{x} | en)"}"##, .invalidExpression, column: 16),
        TemplateErrorCase("length is not a number", .json, ##"{"a":"$(title, x)"}"##, .invalidLength, column: 16),
        TemplateErrorCase("length is zero", .json, ##"{"a":"$(title, 0)"}"##, .invalidLength, column: 16),
        TemplateErrorCase("length is negative", .json, ##"{"a":"$(title, -1)"}"##, .invalidLength, column: 16),
        TemplateErrorCase("length is too large", .json, ##"{"a":"$(title, 99999999999999999999)"}"##, .invalidLength, column: 16),
        TemplateErrorCase("ellipsis without length", .json, ##"{"a":".(title)"}"##, .invalidLength, column: 7),
        TemplateErrorCase("percent with a length", .json, ##"{"a":"%(q, 3)"}"##, .invalidLength, column: 7),
        TemplateErrorCase("number with a length", .json, ##"{"a":"#(n, 3)"}"##, .invalidLength, column: 7),
        TemplateErrorCase("hyphen in a name", .json, ##"{"a":"$(ti-tle)"}"##, .invalidPropertyName, column: 11),
        TemplateErrorCase("empty name", .json, ##"{"a":"$()"}"##, .invalidPropertyName, column: 9),
        TemplateErrorCase(
            "name too long", .json, "{\"a\":\"$(" + String(repeating: "n", count: 121) + ")\"}", .invalidPropertyName, column: 9),
        TemplateErrorCase("two words", .json, ##"{"a":"$(a b)"}"##, .invalidExpression, column: 11),
        TemplateErrorCase("default without braces", .json, ##"{"a":"$(a:none)"}"##, .invalidExpression, column: 11),
        // #()
        TemplateErrorCase("#() in a composite", .json, ##"{"a":"{$(x) + #(n)}"}"##, .numberInComposite, column: 15),
        TemplateErrorCase("#() in a text composite", .text, "{'n=' + #(n)}", .numberInComposite, column: 9),
        TemplateErrorCase("#() in a longer string", .json, ##"{"a":"Count: #(n)"}"##, .numberNotWholeValue, column: 14),
        // composites
        TemplateErrorCase("unterminated literal", .json, ##"{"a":"{'abc + $(x)}"}"##, .unterminatedLiteral, column: 8),
        TemplateErrorCase("missing +", .json, ##"{"a":"{$(x) 'y'}"}"##, .invalidComposite, column: 13),
        TemplateErrorCase("bare word in a composite", .json, ##"{"a":"{Hi + $(x)}"}"##, .invalidComposite, column: 8),
        TemplateErrorCase("trailing +", .json, ##"{"a":"{$(x) + }"}"##, .invalidComposite, column: 15),
        TemplateErrorCase("text after the composite", .json, ##"{"a":"{$(x)} + {$(y)}"}"##, .invalidComposite, column: 14),
        TemplateErrorCase("composite without }", .json, ##"{"a":"{$(x) + 'y'"}"##, .unclosedComposite, column: 7),
        // JSON
        TemplateErrorCase("missing value", .json, ##"{"a":}"##, .invalidJSON, column: 6),
        TemplateErrorCase(
            "unquoted keys, as in the tutorial's sketch", .json, ##"{aps:{alert:"$(News_French)"}}"##, .invalidJSON, column: 2),
        TemplateErrorCase("trailing comma", .json, ##"{"a":1,}"##, .invalidJSON, column: 8),
        TemplateErrorCase("unterminated string", .json, ##"{"a":"b}"##, .invalidJSON, column: 6),
        TemplateErrorCase("raw newline in a string", .json, "{\"a\":\"b\nc\"}", .invalidJSON, column: 8),
        TemplateErrorCase("bad escape", .json, ##"{"a":"\x"}"##, .invalidJSON, column: 7),
        TemplateErrorCase("lone surrogate", .json, ##"{"a":"\ud800"}"##, .invalidJSON, column: 7),
        TemplateErrorCase("leading zero", .json, ##"{"a":01}"##, .invalidJSON, column: 6),
        TemplateErrorCase("bare expression", .json, ##"{"badge":#(n)}"##, .invalidJSON, column: 10),
        TemplateErrorCase("two documents", .json, ##"{} {}"##, .invalidJSON, column: 4),
        TemplateErrorCase("empty body", .json, "", .invalidJSON, column: 1),
        TemplateErrorCase("expression in a key", .json, ##"{"$(k)":"v"}"##, .expressionInKey, column: 3),
        TemplateErrorCase("escaped expression in a key", .json, ##"{"\u0024(k)":"v"}"##, .expressionInKey, column: 3),
        TemplateErrorCase(
            "position on a later line", .json, "{\n  \"aps\": {\n    \"alert\": \"$(x\"\n  }\n}", .unclosedExpression, line: 3, column: 15),
        TemplateErrorCase("column counts Characters", .json, ##"{"峰会":"$(x"}"##, .unclosedExpression, column: 8),
        TemplateErrorCase("too deep", .json, String(repeating: "[", count: 65) + String(repeating: "]", count: 65), .tooDeep, column: 65),
        // XML
        TemplateErrorCase(
            "expression in a tag, Azure's invalid example", .xml,
            "<tile><visual><binding $(type)><text id=\"1\">Seattle, WA</text></binding></visual></tile>", .invalidXML, column: 24),
        TemplateErrorCase("unclosed $( in XML text", .xml, "<a>$(x</a>", .unclosedExpression, column: 4),
        TemplateErrorCase("mismatched end tag", .xml, "<a><b></a>", .invalidXML, column: 7),
        TemplateErrorCase("bare ampersand", .xml, "<a>x & y</a>", .invalidXML, column: 6),
        TemplateErrorCase("unknown entity", .xml, "<a>&nbsp;</a>", .invalidXML, column: 4),
        TemplateErrorCase("unclosed element", .xml, "<a><b></b>", .invalidXML, column: 1),
        TemplateErrorCase("two roots", .xml, "<a/><b/>", .invalidXML, column: 5),
        TemplateErrorCase("text outside the root", .xml, "<a/>x", .invalidXML, column: 5),
        TemplateErrorCase("< in an attribute", .xml, "<a b=\"<\"/>", .invalidXML, column: 7),
        TemplateErrorCase("duplicate attribute", .xml, "<a b=\"1\" b=\"2\"/>", .invalidXML, column: 10),
        TemplateErrorCase("DOCTYPE", .xml, "<!DOCTYPE a><a/>", .invalidXML, column: 1),
        TemplateErrorCase("no root", .xml, "  ", .invalidXML, column: 3),
        // text
        TemplateErrorCase("unclosed $( in a header", .text, "$(x", .unclosedExpression, column: 1),
    ]

    @Test("code and position", arguments: cases)
    func error(_ row: TemplateErrorCase) {
        #expect {
            _ = try CompiledTemplate.compile(row.body, format: row.format)
        } throws: { error in
            guard let error = error as? TemplateError else { return false }
            #expect(error.code == row.code, "\(error)")
            #expect(error.line == row.line, "\(error)")
            #expect(error.column == row.column, "\(error)")
            return true
        }
    }

    @Test("a body over the size limit")
    func tooLarge() {
        let body = "{\"a\":\"" + String(repeating: "x", count: 65_536) + "\"}"
        #expect(throws: TemplateError.self) { try CompiledTemplate.compile(body, format: .json) }
        do {
            _ = try CompiledTemplate.compile(body, format: .json)
        } catch {
            #expect(error.code == .tooLarge)
            #expect(error.offset == 65_536)
        }
        let smaller = TemplateLimits(maxBodyBytes: 8)
        #expect(throws: TemplateError.self) { try CompiledTemplate.compile("123456789", format: .text, limits: smaller) }
        #expect((try? CompiledTemplate.compile("12345678", format: .text, limits: smaller)) != nil)
    }

    @Test("too many expressions")
    func tooManyExpressions() {
        let limits = TemplateLimits(maxExpressions: 3)
        #expect((try? CompiledTemplate.compile("$(a)$(b)$(c)", format: .text, limits: limits)) != nil)
        do {
            _ = try CompiledTemplate.compile("$(a)$(b)$(c)$(d)", format: .text, limits: limits)
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .tooManyExpressions)
            #expect(error.column == 13)
        }
    }

    @Test("the message names the problem, the place and the text")
    func description() {
        do {
            _ = try CompiledTemplate.compile(##"{"aps":{"alert":"$(News_French"}}"##, format: .json)
            Issue.record("expected an error")
        } catch {
            #expect(error.offset == 17)
            #expect(error.excerpt == ##"{"aps":{"alert":"$(News_French"}}"##)
            #expect(error.description == ##"unclosed '$(': expected ')' at line 1, column 18: "{"aps":{"alert":"$(News_French"}}""##)
        }
    }

    @Test("the excerpt is a window around the place in a long line")
    func excerptWindow() {
        let body = "{\"a\":\"" + String(repeating: "x", count: 100) + "$(y" + String(repeating: "z", count: 100) + "\"}"
        do {
            _ = try CompiledTemplate.compile(body, format: .json)
            Issue.record("expected an error")
        } catch {
            #expect(error.excerpt == String(repeating: "x", count: 30) + "$(y" + String(repeating: "z", count: 27))
            #expect(error.column == 107)
        }
    }
}
