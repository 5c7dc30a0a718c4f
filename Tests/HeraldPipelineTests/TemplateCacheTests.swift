import HeraldRegistry
import Testing

@testable import HeraldPipeline

@Suite("Template cache")
struct TemplateCacheTests {
    static func entry(_ name: String) -> TemplateCache.Entry {
        TemplateCache.compile(Array(#"{"name":"\#(name)","body":"{\"aps\":{\"alert\":\"$(msg)\"}}"}"#.utf8), key: name)
    }

    @Test("past its capacity the cache keeps the most recently used half, however many distinct templates pass")
    func bounded() throws {
        let cache = TemplateCache(layout: SlotLayout(slotCount: 4, prefix: "t"), capacity: 100)
        for index in 0..<5_000 {
            cache.store(Self.entry("t\(index)"), key: "t\(index)")
            #expect(cache.count <= 100)
        }
        #expect(cache.count >= 50)
        guard case .template(let template) = Self.entry("t1") else {
            Issue.record("a valid template did not compile")
            return
        }
        #expect(template.name == "t1")
    }
}
