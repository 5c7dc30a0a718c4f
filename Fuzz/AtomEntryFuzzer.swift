// libFuzzer entry point for the XML reader of Azure's Atom entries (XMLTree, a Foundation-only
// file of HeraldAPI that scripts/fuzz compiles in). Every input is read as a document. The
// fuzzer checks that the reader never crashes or hangs; that what it accepts is well-formed to
// the independent checker of the template fuzzer (it never takes what XML refuses); that a
// refusal says what and where (a line and column inside the input); and that a tree written
// back as XML reads as the same tree.

@_cdecl("LLVMFuzzerTestOneInput")
public func atomEntryFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzBytes(data, size)
    do {
        let tree = try XMLTree.read(bytes)
        let text = String(decoding: bytes, as: UTF8.self)
        // A byte order mark is not part of the document the checker reads.
        let document = text.hasPrefix("\u{FEFF}") ? String(text.dropFirst()) : text
        if let problem = XMLWellFormednessChecker.problem(in: document) { fuzzFail("accepted what is not XML: \(problem)") }
        let written = atomWrite(tree)
        if fuzzVerbose { fuzzTrace("read \(tree.name), written back as \(written)") }
        guard let again = try? XMLTree.read(Array(written.utf8)) else { fuzzFail("the tree written back does not read: \(written)") }
        fuzzRequire(again == tree, "the tree written back reads differently: \(written)")
    } catch {
        let lines = bytes.filter { $0 == 0x0A }.count + 1
        fuzzRequire(
            !error.message.isEmpty && error.line >= 1 && error.line <= lines && error.column >= 1, "a refusal without where: \(error)")
    }
    return 0
}

/// The tree as XML: attributes sorted, text before the children (the tree keeps no order
/// between the two), everything escaped.
func atomWrite(_ tree: XMLTree) -> String {
    var xml = "<" + tree.name
    for (name, value) in tree.attributes.sorted(by: { $0.key < $1.key }) { xml += " \(name)=\"\(atomEscaped(value))\"" }
    xml += ">" + atomEscaped(tree.text)
    for child in tree.children { xml += atomWrite(child) }
    return xml + "</\(tree.name)>"
}

func atomEscaped(_ text: String) -> String {
    var out = ""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        case "\"": out += "&quot;"
        // Line ends in attribute values would be normalised by a reader; keep them as references.
        case "\r": out += "&#13;"
        case "\n": out += "&#10;"
        case "\t": out += "&#9;"
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out
}
