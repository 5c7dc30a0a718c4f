import Foundation
import HeraldDomain
import Testing

@Suite("Template constructs")
struct TemplateRenderTests {
    static let jsonCases: [TemplateRenderCase] = [
        // $(p)
        TemplateRenderCase("value", ##"{"a":"$(title)"}"##, ["title": "Hello!"], ##"{"a":"Hello!"}"##),
        TemplateRenderCase("name is case-insensitive", ##"{"a":"$(TITLE)"}"##, ["Title": "Hi"], ##"{"a":"Hi"}"##),
        TemplateRenderCase("missing property is empty", ##"{"a":"$(title)"}"##, [:], ##"{"a":""}"##),
        TemplateRenderCase("spaces inside the parentheses", ##"{"a":"$( title , 5 )"}"##, ["title": "Hello world"], ##"{"a":"Hello"}"##),
        TemplateRenderCase("digits and underscore in names", ##"{"a":"$(News_2)"}"##, ["news_2": "x"], ##"{"a":"x"}"##),
        // $(p, n)
        TemplateRenderCase("clip", ##"{"a":"$(title, 5)"}"##, ["title": "Hello world"], ##"{"a":"Hello"}"##),
        TemplateRenderCase("clip shorter value", ##"{"a":"$(title, 50)"}"##, ["title": "Hello"], ##"{"a":"Hello"}"##),
        TemplateRenderCase("clip counts grapheme clusters", ##"{"a":"$(t, 2)"}"##, ["t": "👍🏽👨‍👩‍👧x"], ##"{"a":"👍🏽👨‍👩‍👧"}"##),
        TemplateRenderCase("clip keeps combining marks", ##"{"a":"$(t, 1)"}"##, ["t": "e\u{301}x"], "{\"a\":\"e\u{301}\"}"),
        // .(p, n)
        TemplateRenderCase(
            "ellipsis, Azure's example", ##"{"a":".(title, 20)"}"##, ["title": "This is the title line"], ##"{"a":"This is the title..."}"##
        ),
        TemplateRenderCase("ellipsis on a short value", ##"{"a":".(title, 20)"}"##, ["title": "Short"], ##"{"a":"Short"}"##),
        TemplateRenderCase(
            "ellipsis on an exact fit", ##"{"a":".(title, 22)"}"##, ["title": "This is the title line"],
            ##"{"a":"This is the title line"}"##),
        TemplateRenderCase("ellipsis of length 3", ##"{"a":".(t, 3)"}"##, ["t": "abcdef"], ##"{"a":"..."}"##),
        TemplateRenderCase("ellipsis below 3 just clips", ##"{"a":".(t, 2)"}"##, ["t": "abcdef"], ##"{"a":"ab"}"##),
        TemplateRenderCase("ellipsis never splits flags", ##"{"a":".(t, 4)"}"##, ["t": "🇯🇵🇫🇷🇩🇪🇺🇸🇬🇧"], ##"{"a":"🇯🇵..."}"##),
        // %(p)
        TemplateRenderCase(
            "percent-encoding", ##"{"u":"https://x.test/?q=%(q)"}"##, ["q": "a b&c/é~-._"],
            ##"{"u":"https://x.test/?q=a%20b%26c%2F%C3%A9~-._"}"##),
        TemplateRenderCase("percent-encodes quotes and backslashes", ##"{"u":"%(q)"}"##, ["q": ##""\"##], ##"{"u":"%22%5C"}"##),
        // #(p)
        TemplateRenderCase("number", ##"{"badge":"#(n)"}"##, ["n": "40"], ##"{"badge":40}"##),
        TemplateRenderCase("negative decimal with exponent", ##"{"n":"#(n)"}"##, ["n": "-3.5e2"], ##"{"n":-3.5e2}"##),
        TemplateRenderCase("zero", ##"{"n":"#(n)"}"##, ["n": "0"], ##"{"n":0}"##),
        TemplateRenderCase("true", ##"{"b":"#(b)"}"##, ["b": "true"], ##"{"b":true}"##),
        TemplateRenderCase("False from .NET", ##"{"b":"#(b)"}"##, ["b": "False"], ##"{"b":false}"##),
        TemplateRenderCase("non-number is a string", ##"{"n":"#(n)"}"##, ["n": "forty"], ##"{"n":"forty"}"##),
        TemplateRenderCase("leading zero is not a number", ##"{"n":"#(n)"}"##, ["n": "040"], ##"{"n":"040"}"##),
        TemplateRenderCase("trailing dot is not a number", ##"{"n":"#(n)"}"##, ["n": "1."], ##"{"n":"1."}"##),
        TemplateRenderCase("plus sign is not a number", ##"{"n":"#(n)"}"##, ["n": "+1"], ##"{"n":"+1"}"##),
        TemplateRenderCase("a number no double holds is a string", ##"{"n":"#(n)"}"##, ["n": "1e999"], ##"{"n":"1e999"}"##),
        TemplateRenderCase("a negative one too", ##"{"n":"#(n)"}"##, ["n": "-1e400"], ##"{"n":"-1e400"}"##),
        TemplateRenderCase("missing number is an empty string", ##"{"n":"#(n)"}"##, [:], ##"{"n":""}"##),
        TemplateRenderCase("string from #() is escaped", ##"{"n":"#(n)"}"##, ["n": "4\"0"], ##"{"n":"4\"0"}"##),
        TemplateRenderCase("number in an array", ##"["#(n)","$(n)"]"##, ["n": "7"], ##"[7,"7"]"##),
        // defaults
        TemplateRenderCase("default when missing", ##"{"a":"$(p:{none})"}"##, [:], ##"{"a":"none"}"##),
        TemplateRenderCase("default unused when present", ##"{"a":"$(p:{none})"}"##, ["p": "x"], ##"{"a":"x"}"##),
        TemplateRenderCase("default unused when empty", ##"{"a":"$(p:{none})"}"##, ["p": ""], ##"{"a":""}"##),
        TemplateRenderCase("default is clipped too", ##"{"a":".(p:{Untitled story}, 8)"}"##, [:], ##"{"a":"Untit..."}"##),
        TemplateRenderCase("default number", ##"{"badge":"#(n:{0})"}"##, [:], ##"{"badge":0}"##),
        // fallback chains
        TemplateRenderCase(
            "chain: the first present", ##"{"a":"$(fr_CA | fr | en)"}"##, ["fr": "Sommet", "en": "Summit"], ##"{"a":"Sommet"}"##),
        TemplateRenderCase(
            "chain: the first link wins", ##"{"a":"$(fr_CA|fr|en)"}"##, ["fr_ca": "Sommet!", "en": "Summit"], ##"{"a":"Sommet!"}"##),
        TemplateRenderCase("chain: to the last", ##"{"a":"$(fr_CA | fr | en)"}"##, ["EN": "Summit"], ##"{"a":"Summit"}"##),
        TemplateRenderCase("chain: an empty value is present", ##"{"a":"$(fr | en)"}"##, ["fr": "", "en": "Summit"], ##"{"a":""}"##),
        TemplateRenderCase("chain, then the default", ##"{"a":"$(fr | en:{Breaking})"}"##, [:], ##"{"a":"Breaking"}"##),
        TemplateRenderCase("chain clipped", ##"{"a":".(fr | en, 7)"}"##, ["en": "Summit ends"], ##"{"a":"Summ..."}"##),
        TemplateRenderCase("chain as a number", ##"{"n":"#(count | total)"}"##, ["total": "3"], ##"{"n":3}"##),
        TemplateRenderCase("chain in a composite", ##"{"a":"{'» ' + $(fr | en)}"}"##, ["en": "Summit"], ##"{"a":"» Summit"}"##),
        TemplateRenderCase("default is escaped", ##"{"a":"$(p:{a\"b})"}"##, [:], ##"{"a":"a\"b"}"##),
        // composites
        TemplateRenderCase(
            "composite", ##"{"a":"{$(first) + ' ' + $(last)}"}"##, ["first": "Ada", "last": "Lovelace"], ##"{"a":"Ada Lovelace"}"##),
        TemplateRenderCase(
            "Azure's composite", ##"{"a":"{$(prop) + ' - ' + $(prop2)}"}"##, ["prop": "A", "prop2": "B"], ##"{"a":"A - B"}"##),
        TemplateRenderCase("doubled single quote", ##"{"a":"{'it''s ' + $(x)}"}"##, ["x": "on"], ##"{"a":"it's on"}"##),
        TemplateRenderCase("double-quoted literal", ##"{"a":"{\"say \"\"hi\"\" \" + $(x)}"}"##, ["x": "now"], ##"{"a":"say \"hi\" now"}"##),
        TemplateRenderCase("composite keeps outer spaces", ##"{"a":" { $(x) + 'y' } "}"##, ["x": "x"], ##"{"a":" xy "}"##),
        TemplateRenderCase(
            "composite of every kind", ##"{"a":"{$(a, 2) + .(b, 4) + %(c) + $(d:{D})}"}"##, ["a": "abc", "b": "bcdef", "c": "c c"],
            ##"{"a":"abb...c%20cD"}"##),
        TemplateRenderCase("braces inside a literal", ##"{"a":"{'{' + $(x) + '}'}"}"##, ["x": "y"], ##"{"a":"{y}"}"##),
        // interpolation (beyond Azure)
        TemplateRenderCase("interpolation", ##"{"a":"Breaking: $(title)"}"##, ["title": "Summit"], ##"{"a":"Breaking: Summit"}"##),
        TemplateRenderCase(
            "several expressions in one string", ##"{"a":"$(a)-$(b, 1)-%(c)"}"##, ["a": "A", "b": "BB", "c": "/"], ##"{"a":"A-B-%2F"}"##),
        TemplateRenderCase(
            "interpolation re-escapes literal text", ##"{"a":"line\n\"$(a)\"\u00e9"}"##, ["a": "x"], ##"{"a":"line\n\"x\"é"}"##),
        // escaping
        TemplateRenderCase("quotes and backslashes", ##"{"a":"$(v)"}"##, ["v": ##"He said "hi" \o/"##], ##"{"a":"He said \"hi\" \\o/"}"##),
        TemplateRenderCase(
            "control characters", ##"{"a":"$(v)"}"##, ["v": "a\nb\tc\r\u{0}\u{1F}\u{8}\u{C}"], ##"{"a":"a\nb\tc\r\u0000\u001F\b\f"}"##),
        TemplateRenderCase("markup and emoji pass through", ##"{"a":"$(v)"}"##, ["v": "<b>&'🎉"], ##"{"a":"<b>&'🎉"}"##),
        // constants and layout
        TemplateRenderCase(
            "constant renders to its source", "{ \"a\" : [1, -2.5e3, true, null, \"\\u00e9\\n\"] }\n", [:],
            "{ \"a\" : [1, -2.5e3, true, null, \"\\u00e9\\n\"] }\n"),
        TemplateRenderCase("plain braces stay literal", ##"{"data":"{\"k\":1}"}"##, [:], ##"{"data":"{\"k\":1}"}"##),
        TemplateRenderCase("whitespace is kept", "{\n  \"a\": \"$(x)\"\n}", ["x": "y"], "{\n  \"a\": \"y\"\n}"),
        TemplateRenderCase("top-level string", ##""$(x)""##, ["x": "y"], ##""y""##),
    ]

    @Test("JSON", arguments: jsonCases)
    func json(_ row: TemplateRenderCase) throws {
        let template = try CompiledTemplate.compile(row.template, format: row.format)
        let output = template.render(TemplateProperties(row.properties))
        #expect(output == row.expected)
        #expect(TemplateOutput.json(output) != nil, "not valid JSON: \(output)")
    }

    static let xmlCases: [TemplateRenderCase] = [
        TemplateRenderCase("text", .xml, ##"<a><b>$(x)</b></a>"##, ["x": "hi"], ##"<a><b>hi</b></a>"##),
        TemplateRenderCase("text is escaped", .xml, ##"<a>$(x)</a>"##, ["x": ##"<b>&"'"##], ##"<a>&lt;b&gt;&amp;&quot;&apos;</a>"##),
        TemplateRenderCase("attribute", .xml, ##"<a src="$(x)"/>"##, ["x": "q\"<&"], ##"<a src="q&quot;&lt;&amp;"/>"##),
        TemplateRenderCase("single-quoted attribute", .xml, ##"<a src='$(x)'/>"##, ["x": "it's"], ##"<a src='it&apos;s'/>"##),
        TemplateRenderCase("attribute keeps newlines", .xml, ##"<a t="$(x)"/>"##, ["x": "1\n2\t3"], ##"<a t="1&#10;2&#9;3"/>"##),
        TemplateRenderCase(
            "composite attribute", .xml, ##"<image src="{'http://x.test/' + %(img) + '.jpg'}"/>"##, ["img": "a b"],
            ##"<image src="http://x.test/a%20b.jpg"/>"##),
        TemplateRenderCase("composite text", .xml, ##"<text>{'Hi, ' + $(name)}</text>"##, ["name": "Ann"], ##"<text>Hi, Ann</text>"##),
        TemplateRenderCase(
            "interpolation", .xml, ##"<text>Breaking: .(t, 8)</text>"##, ["t": "Summit ends"], ##"<text>Breaking: Summi...</text>"##),
        TemplateRenderCase(
            "entities around an expression", .xml, ##"<t>Tom &amp; $(x) &#233;</t>"##, ["x": "J&J"], ##"<t>Tom &amp; J&amp;J é</t>"##),
        TemplateRenderCase("#() reads like $()", .xml, ##"<t>#(n)</t>"##, ["n": "40"], ##"<t>40</t>"##),
        TemplateRenderCase("CDATA is left alone", .xml, ##"<t><![CDATA[$(x)]]></t>"##, ["x": "y"], ##"<t><![CDATA[$(x)]]></t>"##),
        TemplateRenderCase("comments are left alone", .xml, ##"<t><!-- $(x) -->$(x)</t>"##, ["x": "y"], ##"<t><!-- $(x) -->y</t>"##),
        TemplateRenderCase(
            "declaration and whitespace", .xml, "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<t>$(x)</t>\n", ["x": "y"],
            "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<t>y</t>\n"),
        TemplateRenderCase(
            "characters XML cannot hold", .xml, ##"<t>$(x)</t>"##, ["x": "a\u{1}b\u{FFFE}c\r"], "<t>a\u{FFFD}b\u{FFFD}c&#13;</t>"),
        TemplateRenderCase(
            "constant entity text stays as written", .xml, ##"<t a="&lt;">x &gt; y</t>"##, [:], ##"<t a="&lt;">x &gt; y</t>"##),
    ]

    @Test("XML", arguments: xmlCases)
    func xml(_ row: TemplateRenderCase) throws {
        let template = try CompiledTemplate.compile(row.template, format: row.format)
        let output = template.render(TemplateProperties(row.properties))
        #expect(output == row.expected)
        #expect(TemplateOutput.xml(output) != nil, "not well-formed XML: \(output)")
    }

    static let textCases: [TemplateRenderCase] = [
        TemplateRenderCase("constant header", .text, "alert", [:], "alert"),
        TemplateRenderCase("WNS type", .text, "wns/toast", [:], "wns/toast"),
        TemplateRenderCase("expiry", .text, "$(expiresAt)", ["expiresAt": "2026-11-21T19:00:00Z"], "2026-11-21T19:00:00Z"),
        TemplateRenderCase("expiry constant", .text, "0", [:], "0"),
        TemplateRenderCase("missing expiry", .text, "$(expiresAt)", [:], ""),
        TemplateRenderCase("interpolation", .text, "wns/$(kind:{toast})", [:], "wns/toast"),
        TemplateRenderCase("composite", .text, "{'wns/' + $(kind)}", ["kind": "tile"], "wns/tile"),
        TemplateRenderCase("no escaping of quotes", .text, "$(v)", ["v": ##""<&>'"##], ##""<&>'"##),
        TemplateRenderCase("line breaks cannot split a header", .text, "$(v)", ["v": "alert\r\nX-Evil: 1\u{7F}"], "alert  X-Evil: 1 "),
        TemplateRenderCase("stored literal line breaks cannot split a header", .text, "a\r\nx-evil: 1\u{0}", [:], "a  x-evil: 1 "),
        TemplateRenderCase("nor beside a value", .text, "$(v)\r\nx: 1", ["v": "a"], "a  x: 1"),
        TemplateRenderCase("#() reads like $()", .text, "#(n)", ["n": "5"], "5"),
        TemplateRenderCase("percent-encoding", .text, "%(v)", ["v": "a/b c"], "a%2Fb%20c"),
    ]

    @Test("text", arguments: textCases)
    func text(_ row: TemplateRenderCase) throws {
        let template = try CompiledTemplate.compile(row.template, format: row.format)
        #expect(template.render(TemplateProperties(row.properties)) == row.expected)
    }

    @Test("render into a buffer appends to what is there")
    func renderIntoBuffer() throws {
        let template = try CompiledTemplate.compile(##"{"a":"$(x)"}"##, format: .json)
        var buffer = Array("prefix:".utf8)
        template.render(["x": "1"], into: &buffer)
        template.render(["x": "2"], into: &buffer)
        #expect(String(decoding: buffer, as: UTF8.self) == ##"prefix:{"a":"1"}{"a":"2"}"##)
    }

    @Test("referenced properties and constancy")
    func analysis() throws {
        let template = try CompiledTemplate.compile(
            ##"{"a":"$(News_French)","b":"{$(X) + .(y, 3)}","c":"#(Badge)","d":"plain"}"##, format: .json)
        #expect(template.referencedProperties == ["news_french", "x", "y", "badge"])
        #expect(!template.isConstant)
        let constant = try CompiledTemplate.compile(##"{"aps":{"alert":"Hello!"}}"##, format: .json)
        #expect(constant.isConstant)
        #expect(constant.referencedProperties.isEmpty)
        #expect(constant.render([:]) == constant.source)
    }

    @Test("equal sources compile to equal templates")
    func hashable() throws {
        let a = try CompiledTemplate.compile(##""$(x)""##, format: .json)
        let b = try CompiledTemplate.compile(##""$(x)""##, format: .json)
        let c = try CompiledTemplate.compile(##""$(x)""##, format: .text)
        #expect(a == b)
        #expect(a != c)
        #expect(Set([a, b, c]).count == 2)
    }

    @Test(
        "format detection",
        arguments: [
            ("{\"a\":1}", TemplateFormat.json), ("  [1]", .json), ("\n <toast/>", .xml),
            ("alert", .text), ("$(expiresAt)", .text), ("", .text),
        ])
    func detect(_ body: String, _ format: TemplateFormat) {
        #expect(CompiledTemplate.detectFormat(body) == format)
    }
}

/// Regressions found by the template fuzzer: the opener of a comment may not also serve as
/// its terminator, and XML comments may not contain "--".
@Suite("XML template comments")
struct TemplateXMLCommentTests {
    @Test(
        "unclosed or malformed comments are refused",
        arguments: [
            "<a><!--></a>",
            "<a><!---></a>",
            "<a><!-- a -- b --></a>",
        ])
    func refused(_ body: String) {
        #expect(throws: TemplateError.self) { try CompiledTemplate.compile(body, format: .xml) }
    }

    @Test("expressions inside a comment stay comment text")
    func expressionsInComment() throws {
        // The fuzzer's case: the comment runs from the first "<!--" to the next "-->".
        let template = try CompiledTemplate.compile("<a><!-->$(a)<!--></a>", format: .xml)
        #expect(template.render(TemplateProperties(["a": "<!-- -->"])) == "<a><!-->$(a)<!--></a>")
    }

    @Test("a well-formed comment is kept and expressions after it are rendered")
    func wellFormed() throws {
        let template = try CompiledTemplate.compile("<a><!-- note --><b>$(x)</b></a>", format: .xml)
        #expect(template.render(TemplateProperties(["x": "<&>"])) == "<a><!-- note --><b>&lt;&amp;&gt;</b></a>")
    }
}

@Suite("Template properties")
struct TemplatePropertiesTests {
    @Test("lookup ignores ASCII case", arguments: ["news_french", "NEWS_FRENCH", "News_French", "nEwS_fReNcH"])
    func caseInsensitive(_ name: String) {
        let properties = TemplateProperties(["News_French": "Fin du sommet"])
        #expect(properties[name] == "Fin du sommet")
    }

    @Test("keys differing only in case: the first in code-point order wins")
    func collision() {
        let properties = TemplateProperties(["title": "c", "Title": "b", "TITLE": "a"])
        #expect(properties["title"] == "a")
        #expect(properties.count == 1)
    }

    @Test("folding is ASCII only")
    func asciiFolding() {
        // The Kelvin sign lower-cases to "k" under Unicode rules; it must not match $(key).
        let properties = TemplateProperties(["\u{212A}ey": "x"])
        #expect(properties["key"] == nil)
        let template = try? CompiledTemplate.compile("$(key)", format: .text)
        #expect(template?.render(properties) == "")
    }

    @Test("dictionary literal")
    func literal() {
        let properties: TemplateProperties = ["A": "1", "b": "2"]
        #expect(properties["a"] == "1")
        #expect(properties["B"] == "2")
        #expect(properties["c"] == nil)
        #expect(!properties.isEmpty)
    }

    @Test("large property sets are looked up by hash", arguments: [3, 12, 13, 200])
    func sizes(_ count: Int) {
        var values: [String: String] = [:]
        for index in 0..<count { values["Key_\(index)"] = "value \(index)" }
        let properties = TemplateProperties(values)
        #expect(properties.count == count)
        for index in 0..<count { #expect(properties["KEY_\(index)"] == "value \(index)") }
        #expect(properties["key_\(count)"] == nil)
        let template = try? CompiledTemplate.compile("$(key_\(count - 1))", format: .text)
        #expect(template?.render(properties) == "value \(count - 1)")
    }
}
