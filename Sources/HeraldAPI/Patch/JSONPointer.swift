/// An RFC 6901 JSON Pointer such as `/templates/news~1fr/tags/-`: reference tokens with
/// `~1` standing for `/` and `~0` for `~`. The empty pointer is the whole document.
struct JSONPointer: Sendable, Hashable, CustomStringConvertible {
    var tokens: [String]

    init(tokens: [String]) {
        self.tokens = tokens
    }

    /// `nil` when `text` is neither empty nor starts with `/`, or has a bad `~` escape.
    init?(_ text: String) {
        if text.isEmpty {
            tokens = []
            return
        }
        guard text.hasPrefix("/") else { return nil }
        var tokens: [String] = []
        for raw in text.dropFirst().split(separator: "/", omittingEmptySubsequences: false) {
            var token = ""
            var iterator = raw.makeIterator()
            while let character = iterator.next() {
                guard character == "~" else {
                    token.append(character)
                    continue
                }
                switch iterator.next() {
                case "0": token.append("~")
                case "1": token.append("/")
                default: return nil
                }
            }
            tokens.append(token)
        }
        self.tokens = tokens
    }

    var parent: JSONPointer { JSONPointer(tokens: Array(tokens.dropLast())) }
    var last: String? { tokens.last }

    func appending(_ token: String) -> JSONPointer { JSONPointer(tokens: tokens + [token]) }

    var description: String {
        tokens.map { "/" + $0.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1") }.joined()
    }
}
