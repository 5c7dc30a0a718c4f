import HeraldDomain
import Testing

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
