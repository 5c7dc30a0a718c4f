import Crypto

/// A Lua script and its SHA1, computed locally so `EVALSHA` can be pipelined without first
/// asking Redis for the digest (Redis names scripts by the SHA1 of their exact source bytes).
public struct RedisScript: Sendable, Hashable {
    public let source: String
    /// Lowercase hex SHA1 of `source`, the name Redis uses in `EVALSHA` and `SCRIPT EXISTS`.
    public let sha1: String

    public init(_ source: String) {
        self.source = source
        self.sha1 = Insecure.SHA1.hash(data: Array(source.utf8)).map { $0 < 16 ? "0" + String($0, radix: 16) : String($0, radix: 16) }
            .joined()
    }
}
