/// The body being compiled, as UTF-8 bytes, and the one place that turns a byte offset into
/// the line, column and excerpt a `TemplateError` carries.
struct TemplateSource {
    let bytes: [UInt8]

    init(_ body: String) {
        bytes = Array(body.utf8)
    }

    func error(_ code: TemplateError.Code, at offset: Int, _ message: String) -> TemplateError {
        let offset = min(max(offset, 0), bytes.count)
        var lineStart = offset
        while lineStart > 0 && bytes[lineStart - 1] != 0x0A { lineStart -= 1 }
        var lineEnd = offset
        while lineEnd < bytes.count && bytes[lineEnd] != 0x0A && bytes[lineEnd] != 0x0D { lineEnd += 1 }
        let line = 1 + bytes[..<lineStart].reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
        let before = String(decoding: bytes[lineStart..<offset], as: UTF8.self)
        let after = String(decoding: bytes[offset..<lineEnd], as: UTF8.self)
        let beforeLength = before.count
        let excerpt = String(before.suffix(Self.excerptRadius)) + String(after.prefix(Self.excerptRadius))
        return TemplateError(
            code: code,
            line: line,
            column: beforeLength + 1 - (before.last == "\r" ? 1 : 0),
            offset: offset,
            message: message,
            excerpt: excerpt.replacingCarriageReturns()
        )
    }

    private static let excerptRadius = 30
}

extension String {
    fileprivate func replacingCarriageReturns() -> String {
        guard utf8.contains(0x0D) else { return self }
        return String(unicodeScalars.filter { $0 != "\r" })
    }
}

/// A run of text inside the body (a JSON string's content, an XML text or attribute value,
/// the whole of a text template) after its escapes or entities were decoded, with the way
/// back from each decoded byte to its place in the source so errors point at the template.
struct TemplateText {
    let bytes: [UInt8]
    /// `offsets[i]` is the source offset of `bytes[i]`; one extra entry for the end. Nil when
    /// nothing was decoded and the offsets are simply `base + i`.
    private let offsets: [Int]?
    private let base: Int

    init(bytes: [UInt8], base: Int) {
        self.bytes = bytes
        self.offsets = nil
        self.base = base
    }

    init(bytes: [UInt8], offsets: [Int]) {
        precondition(offsets.count == bytes.count + 1)
        self.bytes = bytes
        self.offsets = offsets
        self.base = 0
    }

    func sourceOffset(_ index: Int) -> Int {
        if let offsets { return offsets[min(index, offsets.count - 1)] }
        return base + index
    }
}
