import HeraldDomain
import Testing

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
