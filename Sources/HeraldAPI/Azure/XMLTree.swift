import Foundation

/// A small XML document read into a tree: enough for the Atom entries Azure's clients send
/// (elements, attributes, character data, CDATA sections, comments, the XML declaration).
/// Herald reads these itself rather than through FoundationXML, which would add libxml2 to the
/// image and to its static build for a few elements. DOCTYPE declarations are refused, so no
/// entity is ever expanded beyond XML's five and character references.
struct XMLTree: Sendable, Equatable {
    /// The name as written (`a:entry`), and without its prefix (`entry`).
    var name: String
    var attributes: [String: String] = [:]
    var children: [XMLTree] = []
    /// The element's own character data (CDATA included), in order, between its children.
    var text: String = ""

    var localName: Substring { name.split(separator: ":", maxSplits: 1).last ?? Substring(name) }

    /// The first child named `localName` (prefix ignored).
    func child(_ localName: String) -> XMLTree? { children.first { $0.localName == localName } }

    /// The text of the first child named `localName`, trimmed of surrounding white space.
    func childText(_ localName: String) -> String? {
        child(localName).map { $0.text.trimmingCharacters(in: .whitespacesAndNewlines) }
    }

    /// A document that is not well-formed: what and where (line and column, from 1).
    struct ReadError: Error, Equatable, CustomStringConvertible {
        var line: Int
        var column: Int
        var message: String
        var description: String { "\(message) at line \(line), column \(column)" }
    }

    static let maxDepth = 32

    /// Reads `bytes` (UTF-8) into its root element.
    static func read(_ bytes: [UInt8]) throws(ReadError) -> XMLTree {
        var reader = Reader(bytes: bytes)
        return try reader.document()
    }
}

extension XMLTree {
    fileprivate struct Reader {
        let bytes: [UInt8]
        var index = 0

        init(bytes: [UInt8]) {
            self.bytes = bytes
            // A UTF-8 byte order mark.
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
        }

        mutating func document() throws(ReadError) -> XMLTree {
            try checkCharacters()
            try misc()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "<") else { throw error("expected a root element") }
            let root = try element(depth: 1)
            try misc()
            guard index == bytes.count else { throw error("content after the root element") }
            return root
        }

        /// XML 1.0 allows no C0 control but tab, newline and carriage return.
        func checkCharacters() throws(ReadError) {
            for (position, byte) in bytes.enumerated() where byte < 0x20 && byte != 0x09 && byte != 0x0A && byte != 0x0D {
                throw error("a control character (\(byte)) is not allowed in XML", at: position)
            }
            guard String(validating: bytes, as: UTF8.self) != nil else { throw error("the document is not UTF-8", at: 0) }
            for (position, byte) in bytes.enumerated() where byte == 0xEF && position + 2 < bytes.count {
                if bytes[position + 1] == 0xBF && bytes[position + 2] >= 0xBE {
                    throw error("U+FFFE and U+FFFF are not allowed in XML", at: position)
                }
            }
        }

        /// White space, comments, processing instructions (the declaration among them).
        mutating func misc() throws(ReadError) {
            while true {
                skipSpace()
                if has("<?") {
                    try skip(past: "?>", what: "processing instruction")
                } else if has("<!--") {
                    try comment()
                } else if has("<!DOCTYPE") || has("<!doctype") {
                    throw error("DOCTYPE declarations are not accepted")
                } else {
                    return
                }
            }
        }

        mutating func element(depth: Int) throws(ReadError) -> XMLTree {
            guard depth <= XMLTree.maxDepth else { throw error("elements nest deeper than \(XMLTree.maxDepth)") }
            index += 1  // <
            var node = XMLTree(name: try name())
            while true {
                let hadSpace = skipSpace()
                guard index < bytes.count else { throw error("<\(node.name)> is never closed") }
                if has("/>") {
                    index += 2
                    return node
                }
                if bytes[index] == UInt8(ascii: ">") {
                    index += 1
                    break
                }
                guard hadSpace else { throw error("expected white space, '>' or '/>' in <\(node.name)>") }
                let attribute = try name()
                skipSpace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "=") else {
                    throw error("attribute \(attribute) of <\(node.name)> has no value")
                }
                index += 1
                skipSpace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") else {
                    throw error("the value of attribute \(attribute) is not quoted")
                }
                let quote = bytes[index]
                index += 1
                let value = try characterData(until: quote, inAttribute: true)
                index += 1  // the closing quote
                guard node.attributes.updateValue(value, forKey: attribute) == nil else {
                    throw error("attribute \(attribute) appears twice in <\(node.name)>")
                }
            }
            // Content, up to the matching end tag.
            while true {
                guard index < bytes.count else { throw error("<\(node.name)> is never closed") }
                if has("</") {
                    index += 2
                    let closing = try name()
                    guard closing == node.name else { throw error("</\(closing)> closes <\(node.name)>") }
                    skipSpace()
                    guard index < bytes.count, bytes[index] == UInt8(ascii: ">") else { throw error("expected '>' after </\(closing)") }
                    index += 1
                    return node
                } else if has("<![CDATA[") {
                    index += 9
                    let start = index
                    try skip(past: "]]>", what: "CDATA section")
                    node.text += String(decoding: bytes[start..<(index - 3)], as: UTF8.self)
                } else if has("<!--") {
                    try comment()
                } else if has("<?") {
                    try skip(past: "?>", what: "processing instruction")
                } else if has("<!") {
                    throw error("markup declarations are not accepted inside <\(node.name)>")
                } else if bytes[index] == UInt8(ascii: "<") {
                    node.children.append(try element(depth: depth + 1))
                } else {
                    node.text += try characterData(until: UInt8(ascii: "<"), inAttribute: false)
                }
            }
        }

        /// Text up to `end` (not consumed), with its references replaced.
        mutating func characterData(until end: UInt8, inAttribute: Bool) throws(ReadError) -> String {
            var out: [UInt8] = []
            while index < bytes.count, bytes[index] != end {
                let byte = bytes[index]
                if byte == UInt8(ascii: "&") {
                    out += try reference()
                } else if !inAttribute && has("]]>") {
                    throw error("']]>' is not allowed in character data")
                } else if inAttribute && byte == UInt8(ascii: "<") {
                    throw error("'<' is not allowed in an attribute value")
                } else {
                    out.append(byte)
                    index += 1
                }
            }
            guard index < bytes.count else {
                throw error(inAttribute ? "an attribute value is never closed" : "the document ends inside an element")
            }
            return String(decoding: out, as: UTF8.self)
        }

        /// `&lt;`, `&gt;`, `&amp;`, `&quot;`, `&apos;`, `&#nnn;` or `&#xhh;`.
        mutating func reference() throws(ReadError) -> [UInt8] {
            let start = index
            guard let semicolon = bytes[index...].prefix(12).firstIndex(of: UInt8(ascii: ";")) else {
                throw error("'&' starts no reference (write &amp;)")
            }
            let name = String(decoding: bytes[(index + 1)..<semicolon], as: UTF8.self)
            index = semicolon + 1
            switch name {
            case "lt": return [UInt8(ascii: "<")]
            case "gt": return [UInt8(ascii: ">")]
            case "amp": return [UInt8(ascii: "&")]
            case "quot": return [UInt8(ascii: "\"")]
            case "apos": return [UInt8(ascii: "'")]
            default:
                // `#` and up to 8 decimal digits, or `#x` and up to 8 hexadecimal ones.
                let hex = name.hasPrefix("#x")
                let digits = name.dropFirst(hex ? 2 : 1)
                let scalar: UInt32? =
                    name.hasPrefix("#") && (1...8).contains(digits.count)
                        && digits.allSatisfy { hex ? $0.isHexDigit : $0.isASCII && $0.isNumber }
                    ? UInt32(digits, radix: hex ? 16 : 10) : nil
                guard let scalar, let character = Unicode.Scalar(scalar),
                    scalar == 0x09 || scalar == 0x0A || scalar == 0x0D || scalar >= 0x20, scalar != 0xFFFE, scalar != 0xFFFF
                else { throw error("&\(name); is not a reference XML defines", at: start) }
                return Array(String(Character(character)).utf8)
            }
        }

        /// A name: a letter, `_`, `:` or any non-ASCII character, then those, digits, `-` and `.`
        /// (XML's classes, with every non-ASCII character taken as a letter).
        mutating func name() throws(ReadError) -> String {
            let start = index
            func isStart(_ byte: UInt8) -> Bool {
                (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ":") || byte >= 0x80
            }
            guard index < bytes.count, isStart(bytes[index]) else {
                guard index < bytes.count else { throw error("expected a name") }
                throw error("a name cannot start with '\(Character(Unicode.Scalar(bytes[index])))'")
            }
            index += 1
            while index < bytes.count,
                isStart(bytes[index]) || (0x30...0x39).contains(bytes[index]) || bytes[index] == UInt8(ascii: "-")
                    || bytes[index] == UInt8(ascii: ".")
            {
                index += 1
            }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        @discardableResult
        mutating func skipSpace() -> Bool {
            let start = index
            while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x09 || bytes[index] == 0x0A || bytes[index] == 0x0D {
                index += 1
            }
            return index > start
        }

        func has(_ text: StaticString) -> Bool {
            let count = text.utf8CodeUnitCount
            guard index + count <= bytes.count else { return false }
            return text.withUTF8Buffer { prefix in bytes[index..<(index + count)].elementsEqual(prefix) }
        }

        /// A comment, which may not hold `--`.
        mutating func comment() throws(ReadError) {
            let start = index
            index += 4
            while index < bytes.count {
                if has("--") {
                    guard has("-->") else { throw error("'--' is not allowed inside a comment") }
                    index += 3
                    return
                }
                index += 1
            }
            throw error("a comment is never closed", at: start)
        }

        /// Moves past the next `end`; an error naming `what` when there is none.
        mutating func skip(past end: StaticString, what: String) throws(ReadError) {
            let start = index
            let marker = end.withUTF8Buffer { Array($0) }
            guard let found = bytes[index...].firstRange(of: marker) else { throw error("a \(what) is never closed", at: start) }
            index = found.upperBound
        }

        func error(_ message: String, at position: Int? = nil) -> ReadError {
            let position = min(position ?? index, bytes.count)
            var line = 1
            var lineStart = 0
            for (offset, byte) in bytes[..<position].enumerated() where byte == 0x0A {
                line += 1
                lineStart = offset + 1
            }
            let column = String(decoding: bytes[lineStart..<position], as: UTF8.self).count + 1
            return ReadError(line: line, column: column, message: message)
        }
    }
}
