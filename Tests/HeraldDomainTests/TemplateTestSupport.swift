import Foundation
import HeraldDomain
import Testing

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Independent checks of rendered output, so the tests do not trust the template compiler's
/// own scanners to judge what it produced.
enum TemplateOutput {
    /// The parsed JSON value, or nil when the text is not valid JSON.
    static func json(_ text: String) -> Any? {
        try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
    }

    /// The string at a key path of a JSON object (`["aps", "alert"]`).
    static func jsonString(_ text: String, _ path: String...) -> String? {
        var value = json(text)
        for key in path { value = (value as? [String: Any])?[key] }
        return value as? String
    }

    /// The parsed XML document, or nil when it is not well-formed.
    static func xml(_ text: String) -> TemplateXMLSummary? {
        let collector = TemplateXMLSummaryCollector()
        let parser = XMLParser(data: Data(text.utf8))
        parser.delegate = collector
        return parser.parse() ? collector.summary : nil
    }
}

/// Text and attributes of each element, keyed by element name (last one wins).
struct TemplateXMLSummary {
    var text: [String: String] = [:]
    var attributes: [String: [String: String]] = [:]
}

private final class TemplateXMLSummaryCollector: NSObject, XMLParserDelegate {
    var summary = TemplateXMLSummary()
    private var stack: [String] = []

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
        qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]
    ) {
        stack.append(elementName)
        summary.attributes[elementName] = attributeDict
        summary.text[elementName] = ""
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?) {
        stack.removeLast()
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        if let top = stack.last { summary.text[top, default: ""] += string }
    }

    func parser(_ parser: XMLParser, foundCDATA CDATABlock: Data) {
        if let top = stack.last { summary.text[top, default: ""] += String(decoding: CDATABlock, as: UTF8.self) }
    }
}

/// One row of a rendering table.
struct TemplateRenderCase: Sendable, CustomTestStringConvertible {
    var name: String
    var format: TemplateFormat
    var template: String
    var properties: [String: String]
    var expected: String

    init(_ name: String, _ template: String, _ properties: [String: String], _ expected: String) {
        self.init(name, .json, template, properties, expected)
    }

    init(_ name: String, _ format: TemplateFormat, _ template: String, _ properties: [String: String], _ expected: String) {
        self.name = name
        self.format = format
        self.template = template
        self.properties = properties
        self.expected = expected
    }

    var testDescription: String { name }
}
