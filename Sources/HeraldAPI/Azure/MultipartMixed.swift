import Foundation
import HeraldDomain

/// The `multipart/mixed` body of Azure's direct batch send (RFC 2046 §5.1): parts between
/// `--<boundary>` lines, each a block of headers, an empty line and a body, the last followed
/// by `--<boundary>--`. Azure's clients name their parts in `Content-Disposition`
/// (`inline; name=notification`, `inline; name=devices`). Herald's own: two parts of one route do
/// not justify a dependency (Vapor's multipart-kit decodes form-data into `Codable` types) and
/// its share of every build.
struct MultipartMixed {
    struct Part {
        /// Header names in lower case.
        var headers: [String: String]
        var body: [UInt8]

        /// The `name` parameter of its `Content-Disposition`.
        var name: String? {
            guard let disposition = headers["content-disposition"] else { return nil }
            return MultipartMixed.parameter("name", in: disposition)
        }
    }

    var parts: [Part]

    /// The boundary of a `multipart/mixed` content type; the problem in words when it has none.
    static func boundary(ofContentType contentType: String?) -> Result<String, MultipartProblem> {
        guard let contentType else { return .failure(MultipartProblem("the body must be multipart/mixed; no Content-Type was sent")) }
        let type = contentType.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        guard type == "multipart/mixed" else {
            return .failure(MultipartProblem("the body must be multipart/mixed, not \(type ?? contentType)"))
        }
        guard let boundary = parameter("boundary", in: contentType), !boundary.isEmpty, boundary.utf8.count <= 70 else {
            return .failure(MultipartProblem("the multipart/mixed Content-Type needs a boundary of 1 to 70 characters"))
        }
        return .success(boundary)
    }

    /// Splits `body` at `boundary`; the problem (with the part's number) when it is malformed.
    static func parse(_ body: [UInt8], boundary: String) -> Result<MultipartMixed, MultipartProblem> {
        let delimiter = Array("--\(boundary)".utf8)
        var starts: [Int] = []
        var index = 0
        // A delimiter opens the body or follows a line break, and is followed by a line break
        // (a part) or by "--" (the end).
        while let found = find(delimiter, in: body, from: index) {
            if found == 0 || (found >= 1 && body[found - 1] == UInt8(ascii: "\n")) { starts.append(found) }
            index = found + delimiter.count
        }
        guard !starts.isEmpty else { return .failure(MultipartProblem("no part starts with --\(boundary)")) }
        var parts: [Part] = []
        var closed = false
        for (number, start) in starts.enumerated() {
            let afterDelimiter = start + delimiter.count
            if body[afterDelimiter...].starts(with: Array("--".utf8)) {
                closed = true
                break
            }
            guard number + 1 < starts.count else { break }
            let end = lineBreakStart(before: starts[number + 1], in: body)
            guard let headerStart = lineEnd(from: afterDelimiter, in: body), headerStart <= end else {
                return .failure(MultipartProblem("part \(number + 1) has no line break after its boundary"))
            }
            switch part(body[headerStart..<end], number: number + 1) {
            case .success(let part): parts.append(part)
            case .failure(let problem): return .failure(problem)
            }
        }
        guard closed else { return .failure(MultipartProblem("the body does not end with --\(boundary)--")) }
        return .success(MultipartMixed(parts: parts))
    }

    /// Headers, an empty line, then the body.
    private static func part(_ bytes: ArraySlice<UInt8>, number: Int) -> Result<Part, MultipartProblem> {
        var headers: [String: String] = [:]
        var position = bytes.startIndex
        while true {
            guard let lineEnd = bytes[position...].firstIndex(of: UInt8(ascii: "\n")) else {
                return .failure(MultipartProblem("part \(number) has no empty line between its headers and its body"))
            }
            var line = bytes[position..<lineEnd]
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            position = lineEnd + 1
            if line.isEmpty { break }
            let text = String(decoding: line, as: UTF8.self)
            guard let colon = text.firstIndex(of: ":") else {
                return .failure(MultipartProblem("part \(number) has a header line without a colon: \(text.prefix(60))"))
            }
            headers[text[..<colon].trimmingCharacters(in: .whitespaces).lowercased()] =
                text[text.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return .success(Part(headers: headers, body: Array(bytes[position...])))
    }

    /// `name=value` or `name="value"` among the `;`-separated parameters of a header value.
    static func parameter(_ name: String, in value: String) -> String? {
        for piece in value.split(separator: ";").dropFirst() {
            let pair = piece.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == name else { continue }
            var text = pair[1].trimmingCharacters(in: .whitespaces)
            if text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") { text = String(text.dropFirst().dropLast()) }
            return text
        }
        return nil
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard !needle.isEmpty, haystack.count >= needle.count, start <= haystack.count - needle.count else { return nil }
        var index = start
        while index <= haystack.count - needle.count {
            if haystack[index] == needle[0], haystack[index..<(index + needle.count)].elementsEqual(needle) { return index }
            index += 1
        }
        return nil
    }

    /// The index after the line break that ends the line holding `start`.
    private static func lineEnd(from start: Int, in body: [UInt8]) -> Int? {
        body[start...].firstIndex(of: UInt8(ascii: "\n")).map { $0 + 1 }
    }

    /// Where the line break before a delimiter at `delimiter` begins (CRLF or LF belongs to it).
    private static func lineBreakStart(before delimiter: Int, in body: [UInt8]) -> Int {
        var end = delimiter - 1
        if end > 0, body[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        return end
    }
}

/// Why a multipart body cannot be read.
struct MultipartProblem: Error {
    var message: String
    init(_ message: String) { self.message = message }
}
