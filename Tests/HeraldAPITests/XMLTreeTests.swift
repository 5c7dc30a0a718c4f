import Foundation
@testable import HeraldAPI
import Testing

#if canImport(FoundationXML)
    import FoundationXML
#endif

@Suite("XMLTree: the Atom entries Azure's clients send")
struct XMLTreeTests {
    @Test("an entry: declaration, namespaces, attributes, CDATA, references and comments")
    func entry() throws {
        let text = """
            \u{FEFF}<?xml version="1.0" encoding="utf-8"?>
            <!-- a registration -->
            <entry xmlns="http://www.w3.org/2005/Atom">
              <content type='application/xml'>
                <a:AppleTemplateRegistrationDescription xmlns:a="http://schemas.microsoft.com/netservices/2010/10/servicebus/connect">
                  <a:Tags>World, Sports &amp; more</a:Tags>
                  <a:DeviceToken>ab&#x41;&#66;</a:DeviceToken>
                  <a:BodyTemplate><![CDATA[{"aps":{"alert":"$(News_English)"}}]]></a:BodyTemplate>
                  <a:Empty/>
                </a:AppleTemplateRegistrationDescription>
              </content>
            </entry>
            """
        let root = try XMLTree.read(Array(text.utf8))
        #expect(root.name == "entry" && root.attributes["xmlns"] == "http://www.w3.org/2005/Atom")
        let content = try #require(root.child("content"))
        #expect(content.attributes["type"] == "application/xml")
        let description = try #require(content.children.first)
        #expect(description.name == "a:AppleTemplateRegistrationDescription")
        #expect(description.localName == "AppleTemplateRegistrationDescription")
        #expect(description.childText("Tags") == "World, Sports & more")
        #expect(description.childText("DeviceToken") == "abAB")
        #expect(description.childText("BodyTemplate") == #"{"aps":{"alert":"$(News_English)"}}"#)
        #expect(description.child("Empty") == XMLTree(name: "a:Empty"))
        #expect(description.child("Missing") == nil)
    }

    @Test(
        "what is not well-formed is refused with what and where",
        arguments: [
            ("<a><b></a>", "</a> closes <b> at line 1, column 10"),
            ("<a>\n  <b>", "<b> is never closed at line 2, column 6"),
            ("<!DOCTYPE a [<!ENTITY x \"y\">]><a/>", "DOCTYPE declarations are not accepted at line 1, column 1"),
            ("<a>&x;</a>", "&x; is not a reference XML defines at line 1, column 4"),
            ("<a>&#0;</a>", "&#0; is not a reference XML defines at line 1, column 4"),
            ("<a>a & b</a>", "'&' starts no reference (write &amp;) at line 1, column 6"),
            ("<a x=1/>", "the value of attribute x is not quoted at line 1, column 6"),
            ("<a x='1' x='2'/>", "attribute x appears twice in <a> at line 1, column 15"),
            ("<a/><b/>", "content after the root element at line 1, column 5"),
            ("", "expected a root element at line 1, column 1"),
            ("<a><![CDATA[x</a>", "a CDATA section is never closed at line 1, column 13"),
            ("<a>\u{1}</a>", "a control character (1) is not allowed in XML at line 1, column 4"),
            ("<1a/>", "a name cannot start with '1' at line 1, column 2"),
        ])
    func refused(text: String, message: String) {
        #expect(throws: XMLTree.ReadError.self) { try XMLTree.read(Array(text.utf8)) }
        do {
            _ = try XMLTree.read(Array(text.utf8))
        } catch {
            #expect(error.description == message)
        }
    }

    @Test("elements nested deeper than the limit are refused")
    func depth() {
        let deep = String(repeating: "<a>", count: XMLTree.maxDepth + 1) + String(repeating: "</a>", count: XMLTree.maxDepth + 1)
        #expect(throws: XMLTree.ReadError.self) { try XMLTree.read(Array(deep.utf8)) }
        let fits = String(repeating: "<a>", count: XMLTree.maxDepth) + String(repeating: "</a>", count: XMLTree.maxDepth)
        #expect(throws: Never.self) { try XMLTree.read(Array(fits.utf8)) }
    }

    #if canImport(FoundationXML)
        /// Foundation's parser (libxml2) as the oracle: the same elements and text, or both refuse.
        @Test(
            "documents read as Foundation's XMLParser reads them",
            arguments: [
                "<r><a x=\"1 &lt; 2\">t&amp;u<b/>v</a><c><![CDATA[<d>]]></c></r>",
                "<?xml version=\"1.0\"?><r>\n<!-- c --><a>&#233;&#x1F600;</a></r>",
                "<r><a></r>", "<r>&bogus;</r>", "<r a='1' a='2'/>",
            ])
        func agreesWithFoundation(text: String) throws {
            let bytes = Array(text.utf8)
            let oracle = OracleTree(Data(bytes))
            let ours = try? XMLTree.read(bytes)
            #expect(
                (ours == nil) == (oracle.root == nil), "ours: \(String(describing: ours)), Foundation: \(String(describing: oracle.root))")
            if let ours, let root = oracle.root { #expect(ours == root) }
        }

        final class OracleTree: NSObject, XMLParserDelegate {
            private var stack: [XMLTree] = []
            private(set) var root: XMLTree?
            private var failed = false

            init(_ data: Data) {
                super.init()
                let parser = XMLParser(data: data)
                parser.delegate = self
                if !parser.parse() || failed { root = nil }
            }

            func parser(
                _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String]
            ) {
                stack.append(XMLTree(name: name, attributes: attributes))
            }

            func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
                guard let done = stack.popLast() else { return }
                if stack.isEmpty {
                    if root != nil { failed = true }
                    root = done
                } else {
                    stack[stack.count - 1].children.append(done)
                }
            }

            func parser(_ parser: XMLParser, foundCharacters string: String) {
                if !stack.isEmpty { stack[stack.count - 1].text += string }
            }

            func parser(_ parser: XMLParser, foundCDATA block: Data) {
                if !stack.isEmpty { stack[stack.count - 1].text += String(decoding: block, as: UTF8.self) }
            }
        }
    #endif
}
