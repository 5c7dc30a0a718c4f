import Foundation
import HeraldDomain
import PropertyBased
import Testing

/// Whatever the property values hold, the output stays valid and clipping stays in bounds.
@Suite("Template properties hold for arbitrary values")
struct TemplatePropertyBasedTests {
    /// Pieces chosen to break naive escaping: quotes, backslashes, control characters,
    /// markup, entity look-alikes, expression look-alikes, combining marks, ZWJ sequences,
    /// flags, line/paragraph separators and the XML-forbidden U+FFFE. (U+FEFF is left out:
    /// Foundation's decoders drop it at the start of a string, which would fool the oracle;
    /// `byteOrderMark` checks it passes through.)
    static let pieces: [String] = [
        "a", "Z", "0", " ", "\"", "'", "\\", "/", "\n", "\r", "\t", "\u{0}", "\u{1}", "\u{1F}", "\u{7F}",
        "<", ">", "&", "&amp;", "]]>", "$(x)", "#(x)", "{", "}", "+", "%", "é", "e\u{301}", "👍🏽",
        "👨‍👩‍👧", "🇯🇵", "峰", "\u{2028}", "\u{FFFE}", "\u{200D}",
    ]

    static let values = Gen<String?>.element(of: pieces).array(of: 0...16).map { $0.compactMap { $0 }.joined() }

    static let jsonTemplate = try! CompiledTemplate.compile(
        ##"{"aps":{"alert":"$(v)","title":".(v, 10)","short":"$(v, 3)","badge":"#(v)"},"##
            + ##""u":"https://x.test/?q=%(v)","c":"{'<' + $(v) + '>'}","i":"Breaking: $(v)!","d":"$(missing:{fallback})"}"##,
        format: .json)

    static let xmlTemplate = try! CompiledTemplate.compile(
        ##"<toast launch="$(v)"><visual><binding template="ToastText01"><text id="1">$(v)</text>"##
            + ##"<text id="2">{'[' + .(v, 10) + ']'}</text><image src="https://x.test/%(v)"/></binding></visual></toast>"##,
        format: .xml)

    @Test("JSON output is always valid JSON and carries the value exactly")
    func jsonAlwaysValid() async {
        await propertyCheck(count: 300, input: Self.values) { value in
            let output = Self.jsonTemplate.render(["V": value])
            guard let object = TemplateOutput.json(output) as? [String: Any] else {
                Issue.record("not valid JSON: \(output.debugDescription)")
                return
            }
            let aps = object["aps"] as? [String: Any]
            #expect(aps?["alert"] as? String == value)
            #expect(object["i"] as? String == "Breaking: \(value)!")
            #expect(object["c"] as? String == "<\(value)>")
            #expect(object["d"] as? String == "fallback")
        }
    }

    @Test("XML output is always well-formed")
    func xmlAlwaysWellFormed() async {
        await propertyCheck(count: 300, input: Self.values) { value in
            let output = Self.xmlTemplate.render(["v": value])
            guard let document = TemplateOutput.xml(output) else {
                Issue.record("not well-formed XML: \(output.debugDescription)")
                return
            }
            // Characters XML cannot carry are replaced by U+FFFD; everything else survives.
            let expected = String(
                String.UnicodeScalarView(
                    value.unicodeScalars.map { scalar in
                        let v = scalar.value
                        let allowed = v == 0x9 || v == 0xA || v == 0xD || (v >= 0x20 && v != 0xFFFE && v != 0xFFFF)
                        return allowed ? scalar : "\u{FFFD}"
                    }))
            #expect(document.attributes["toast"]?["launch"] == expected)
        }
    }

    @Test("clipping never exceeds n Characters and never splits one")
    func clipping() async {
        await propertyCheck(count: 300, input: Self.values, Gen.int(in: 1...12)) { value, length in
            let template = try! CompiledTemplate.compile(##"{"clip":"$(v, \##(length))","dots":".(v, \##(length))"}"##, format: .json)
            let object = TemplateOutput.json(template.render(["v": value])) as? [String: String]
            let clip = object?["clip"] ?? "<missing>"
            let dots = object?["dots"] ?? "<missing>"
            let characters = Array(value)
            let kept = String(characters.prefix(length))
            #expect(clip.utf8.elementsEqual(kept.utf8))
            #expect(clip.count <= length)
            #expect(dots.count <= length)
            if characters.count <= length {
                #expect(dots == value)
            } else if length >= 3 {
                #expect(dots.utf8.elementsEqual((String(characters.prefix(length - 3)) + "...").utf8))
            } else {
                #expect(dots.utf8.elementsEqual(kept.utf8))
            }
        }
    }

    @Test("a header value never contains a line break")
    func headerSafe() async {
        let template = try! CompiledTemplate.compile("prefix $(v)", format: .text)
        await propertyCheck(count: 200, input: Self.values) { value in
            let output = template.render(["v": value])
            #expect(!output.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }))
            #expect(output.unicodeScalars.count == "prefix ".unicodeScalars.count + value.unicodeScalars.count)
        }
    }

    @Test("%() output decodes back to the value")
    func percentRoundTrip() async {
        let template = try! CompiledTemplate.compile("%(v)", format: .text)
        await propertyCheck(count: 200, input: Self.values) { value in
            let output = template.render(["v": value])
            #expect(output.utf8.allSatisfy { $0 == 0x25 || $0.isUnreserved })
            #expect(output.removingPercentEncoding == value)
        }
    }

    @Test("a byte order mark in a value is copied, not dropped")
    func byteOrderMark() throws {
        let template = try CompiledTemplate.compile(##"{"a":"$(v)"}"##, format: .json)
        #expect(Array(template.render(["v": "\u{FEFF}x"]).utf8) == Array(##"{"a":""##.utf8) + [0xEF, 0xBB, 0xBF] + Array(##"x"}"##.utf8))
    }
}

extension UInt8 {
    fileprivate var isUnreserved: Bool {
        switch self {
        case 0x41...0x5A, 0x61...0x7A, 0x30...0x39, 0x2D, 0x2E, 0x5F, 0x7E: true
        default: false
        }
    }
}
