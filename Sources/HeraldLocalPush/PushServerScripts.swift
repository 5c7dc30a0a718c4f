import Foundation

/// The answers scripted on a local push server, taken in this order: a token's permanent
/// answer, then the answers queued for that token, then those queued for any token.
struct AnswerScript<Answer: Sendable>: Sendable {
    private var always: [String: Answer] = [:]
    private var queued: [String: [Answer]] = [:]
    private var anyToken: [Answer] = []

    mutating func script(token: String, _ answers: [Answer]) { queued[token, default: []].append(contentsOf: answers) }

    mutating func failNext(_ count: Int, with answer: Answer) {
        anyToken.append(contentsOf: repeatElement(answer, count: max(0, count)))
    }

    mutating func alwaysAnswer(token: String, _ answer: Answer?) { always[token] = answer }

    /// The scripted answer for the next request to `token`, consumed; nil: normal behaviour.
    mutating func next(for token: String) -> Answer? {
        if let answer = always[token] { return answer }
        if var answers = queued[token], !answers.isEmpty {
            let answer = answers.removeFirst()
            queued[token] = answers.isEmpty ? nil : answers
            return answer
        }
        return anyToken.isEmpty ? nil : anyToken.removeFirst()
    }
}

/// The requests a local push server recorded and its counters; the counters always count,
/// the records only while `recording` is on.
struct RequestLog<Record: Sendable>: Sendable {
    var recording = true
    private(set) var records: [Record] = []
    private(set) var total = 0
    private var statuses: [Int: Int] = [:]

    mutating func add(_ record: @autoclosure () -> Record, status: Int) {
        total += 1
        statuses[status, default: 0] += 1
        if recording { records.append(record()) }
    }

    func answered(status: Int) -> Int { statuses[status] ?? 0 }
}

/// The unverified parts of a compact JWT ("header.payload.signature"), to check the header and
/// read claims; the signature is JWTKit's job.
struct CompactJWT {
    struct Header: Decodable {
        var alg: String?
        var kid: String?
        var typ: String?
    }

    let header: Header
    let payload: Data

    init?(_ token: some StringProtocol) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
            let headerData = Self.base64URLDecoded(parts[0]),
            let header = try? JSONDecoder().decode(Header.self, from: headerData),
            let payload = Self.base64URLDecoded(parts[1])
        else { return nil }
        self.header = header
        self.payload = payload
    }

    static func base64URLDecoded(_ text: some StringProtocol) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }
}

/// A random lowercase hex string of `bytes` bytes.
func randomHex(bytes: Int) -> String {
    (0..<bytes).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
}
