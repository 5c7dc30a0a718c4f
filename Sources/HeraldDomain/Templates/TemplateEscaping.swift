/// How text placed into a template is made safe for where it lands, so that no property
/// value, however strange, can break the surrounding JSON, XML or header.
enum TemplateEscaping: Sendable, Hashable {
    /// Inside a JSON string: `"` `\` and every control character escaped.
    case jsonString
    /// XML character data: the five markup characters as entities; characters XML 1.0
    /// cannot carry at all (most C0 controls, U+FFFE, U+FFFF) replaced by U+FFFD.
    case xmlText
    /// An XML attribute value: as text, and tab, newline and carriage return as character
    /// references so attribute-value normalization does not turn them into spaces.
    case xmlAttribute
    /// A header value or expiry: control characters become spaces so a value can never
    /// split a header line.
    case header

    func append(_ text: UnsafeBufferPointer<UInt8>, into buffer: inout [UInt8]) {
        switch self {
        case .jsonString: Self.appendJSON(text, into: &buffer)
        case .xmlText: Self.appendXML(text, attribute: false, into: &buffer)
        case .xmlAttribute: Self.appendXML(text, attribute: true, into: &buffer)
        case .header: Self.appendHeader(text, into: &buffer)
        }
    }

    func append(_ text: String, into buffer: inout [UInt8]) {
        if text.utf8.withContiguousStorageIfAvailable({ append($0, into: &buffer) }) == nil {
            var copy = text
            copy.withUTF8 { append($0, into: &buffer) }
        }
    }

    func append(_ text: Substring, into buffer: inout [UInt8]) {
        if text.utf8.withContiguousStorageIfAvailable({ append($0, into: &buffer) }) == nil {
            var copy = String(text)
            copy.withUTF8 { append($0, into: &buffer) }
        }
    }

    func append(_ bytes: [UInt8], into buffer: inout [UInt8]) {
        bytes.withUnsafeBufferPointer { append($0, into: &buffer) }
    }

    // MARK: JSON

    private static func appendJSON(_ text: UnsafeBufferPointer<UInt8>, into buffer: inout [UInt8]) {
        var runStart = 0
        for index in 0..<text.count {
            let byte = text[index]
            guard byte < 0x20 || byte == 0x22 || byte == 0x5C else { continue }
            if runStart < index { buffer.append(contentsOf: UnsafeBufferPointer(rebasing: text[runStart..<index])) }
            runStart = index + 1
            buffer.append(TemplateByte.backslash)
            switch byte {
            case 0x22, 0x5C: buffer.append(byte)
            case 0x0A: buffer.append(0x6E)
            case 0x0D: buffer.append(0x72)
            case 0x09: buffer.append(0x74)
            case 0x08: buffer.append(0x62)
            case 0x0C: buffer.append(0x66)
            default:
                // The other control characters as \u00XX.
                buffer.append(0x75)
                buffer.append(0x30)
                buffer.append(0x30)
                buffer.append(hexDigits[Int(byte >> 4)])
                buffer.append(hexDigits[Int(byte & 0x0F)])
            }
        }
        if runStart < text.count { buffer.append(contentsOf: UnsafeBufferPointer(rebasing: text[runStart...])) }
    }

    // MARK: XML

    private static func appendXML(_ text: UnsafeBufferPointer<UInt8>, attribute: Bool, into buffer: inout [UInt8]) {
        var runStart = 0
        var index = 0
        while index < text.count {
            let byte = text[index]
            var replacement: [UInt8]?
            var width = 1
            switch byte {
            case 0x26: replacement = Entity.amp
            case 0x3C: replacement = Entity.lt
            case 0x3E: replacement = Entity.gt
            case 0x22: replacement = Entity.quot
            case 0x27: replacement = Entity.apos
            case 0x0D: replacement = Entity.cr
            case 0x09 where attribute: replacement = Entity.tab
            case 0x0A where attribute: replacement = Entity.lf
            case 0x09, 0x0A: break
            case 0x00..<0x20: replacement = replacementCharacter
            case 0xEF where index + 2 < text.count && text[index + 1] == 0xBF && text[index + 2] >= 0xBE:
                // U+FFFE and U+FFFF are valid Unicode scalars but not XML characters.
                replacement = replacementCharacter
                width = 3
            default: break
            }
            if let replacement {
                if runStart < index { buffer.append(contentsOf: UnsafeBufferPointer(rebasing: text[runStart..<index])) }
                buffer.append(contentsOf: replacement)
                runStart = index + width
            }
            index += width
        }
        if runStart < text.count { buffer.append(contentsOf: UnsafeBufferPointer(rebasing: text[runStart...])) }
    }

    // MARK: Header

    private static func appendHeader(_ text: UnsafeBufferPointer<UInt8>, into buffer: inout [UInt8]) {
        var runStart = 0
        for index in 0..<text.count where text[index] < 0x20 || text[index] == 0x7F {
            if runStart < index { buffer.append(contentsOf: UnsafeBufferPointer(rebasing: text[runStart..<index])) }
            buffer.append(0x20)
            runStart = index + 1
        }
        if runStart < text.count { buffer.append(contentsOf: UnsafeBufferPointer(rebasing: text[runStart...])) }
    }

    // MARK: Percent-encoding (context-free: its output is ASCII that needs no further escaping)

    static func appendPercentEncoded(_ text: UnsafeBufferPointer<UInt8>, into buffer: inout [UInt8]) {
        for byte in text {
            if isUnreserved(byte) {
                buffer.append(byte)
            } else {
                buffer.append(TemplateByte.percent)
                buffer.append(hexDigits[Int(byte >> 4)])
                buffer.append(hexDigits[Int(byte & 0x0F)])
            }
        }
    }

    /// RFC 3986 section 2.3: ALPHA / DIGIT / "-" / "." / "_" / "~".
    @inline(__always)
    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x41...0x5A, 0x61...0x7A, 0x30...0x39, 0x2D, 0x2E, 0x5F, 0x7E: true
        default: false
        }
    }

    private enum Entity {
        static let amp = Array("&amp;".utf8)
        static let lt = Array("&lt;".utf8)
        static let gt = Array("&gt;".utf8)
        static let quot = Array("&quot;".utf8)
        static let apos = Array("&apos;".utf8)
        static let cr = Array("&#13;".utf8)
        static let tab = Array("&#9;".utf8)
        static let lf = Array("&#10;".utf8)
    }

    private static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)
    private static let replacementCharacter: [UInt8] = [0xEF, 0xBF, 0xBD]
}
