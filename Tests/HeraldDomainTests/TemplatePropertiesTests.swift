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
}
