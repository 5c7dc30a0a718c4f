/// Where and how a `RedisConnection` connects. Every field has a default suited to a local
/// Redis; `init(url:)` reads the `redis://[:password@]host[:port][/db]` form operators pass in.
public struct RedisConfiguration: Sendable, Hashable {
    /// Host name or IP address. Default `127.0.0.1`.
    public var host: String
    /// TCP port. Default `6379`.
    public var port: Int
    /// Sent with `AUTH` after every (re)connect when set. Default nil.
    public var username: String?
    public var password: String?
    /// Selected with `SELECT` after every (re)connect when not 0. Default 0.
    public var database: Int
    /// Seconds to wait for the TCP connect. Default 2.
    public var connectTimeout: Double
    /// Seconds a command (or a whole pipeline's write and each reply) may block before it
    /// fails with `.timeout`. Default 10, generous because one pipeline may hold thousands
    /// of commands.
    public var commandTimeout: Double
    /// Connect attempts before giving up with `.connection`, for the first connect and every
    /// reconnect. Default 5.
    public var connectAttempts: Int
    /// Pause before the second attempt, doubled for each further one. Default 0.05 s.
    public var initialBackoff: Double
    /// Upper bound for the pause between attempts. Default 1 s.
    public var maximumBackoff: Double

    public init(
        host: String = "127.0.0.1",
        port: Int = 6379,
        username: String? = nil,
        password: String? = nil,
        database: Int = 0,
        connectTimeout: Double = 2,
        commandTimeout: Double = 10,
        connectAttempts: Int = 5,
        initialBackoff: Double = 0.05,
        maximumBackoff: Double = 1
    ) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.connectTimeout = connectTimeout
        self.commandTimeout = commandTimeout
        self.connectAttempts = connectAttempts
        self.initialBackoff = initialBackoff
        self.maximumBackoff = maximumBackoff
    }

    /// Parses `redis://[[username]:password@]host[:port][/database]`; other fields keep
    /// their defaults. Throws `.connection` naming the offending part.
    public init(url: String) throws {
        self.init()
        let scheme = "redis://"
        if url.lowercased().hasPrefix("rediss://") {
            throw RedisError(code: .connection, message: Self.noTLSMessage)
        }
        guard url.hasPrefix(scheme) else {
            throw RedisError(code: .connection, message: "expected a redis:// URL, got \"\(Self.redacting(url))\"")
        }
        var rest = Substring(url.dropFirst(scheme.count))
        if let at = rest.lastIndex(of: "@") {
            let credentials = rest[..<at]
            rest = rest[rest.index(after: at)...]
            if let colon = credentials.firstIndex(of: ":") {
                let user = credentials[..<colon]
                username = user.isEmpty ? nil : String(user)
                password = String(credentials[credentials.index(after: colon)...]).removingPercentEncodingIfPossible
            } else {
                password = String(credentials).removingPercentEncodingIfPossible
            }
        }
        var authority = rest
        if let slash = rest.firstIndex(of: "/") {
            authority = rest[..<slash]
            let path = rest[rest.index(after: slash)...]
            if !path.isEmpty {
                guard let db = Int(path), db >= 0 else {
                    throw RedisError(code: .connection, message: "database \"\(path)\" in \(Self.redacting(url)) is not a number")
                }
                database = db
            }
        }
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
            // IPv6 literal: [::1]:6379
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let afterClose = authority[authority.index(after: close)...]
            if afterClose.hasPrefix(":") { try setPort(afterClose.dropFirst(), url) }
        } else if let colon = authority.lastIndex(of: ":") {
            host = String(authority[..<colon])
            try setPort(authority[authority.index(after: colon)...], url)
        } else {
            host = String(authority)
        }
        if host.isEmpty { host = "127.0.0.1" }
    }

    private mutating func setPort(_ text: Substring, _ url: String) throws {
        guard let value = Int(text), (1...65535).contains(value) else {
            throw RedisError(code: .connection, message: "port \"\(text)\" in \(Self.redacting(url)) is not a TCP port")
        }
        port = value
    }

    /// Why `rediss://` is refused: the hiredis Herald links (0.14, Debian 12) has no TLS.
    public static let noTLSMessage =
        "rediss:// (Redis over TLS) is not supported: Herald's Redis client (hiredis 0.14) has no TLS; reach Redis over a private network, or through a TLS tunnel such as stunnel on the worker's host (docs/operations.md, \"Redis security\")"

    /// `url` with the password of its user info replaced by `***`, for messages and listings.
    public static func redacting(_ url: String) -> String {
        guard let schemeEnd = url.range(of: "://"), let at = url[schemeEnd.upperBound...].lastIndex(of: "@") else { return url }
        let userInfo = url[schemeEnd.upperBound..<at]
        guard !userInfo.isEmpty else { return url }
        let user = userInfo.firstIndex(of: ":").map { userInfo[..<$0] + ":" } ?? ""
        return url[..<schemeEnd.upperBound] + user + "***" + url[at...]
    }

    /// `host:port` for messages.
    public var endpoint: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

extension String {
    /// Decodes `%XX` escapes in URL user info; leaves the text alone if they are malformed.
    fileprivate var removingPercentEncodingIfPossible: String {
        guard contains("%") else { return self }
        var bytes: [UInt8] = []
        var iterator = utf8.makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next(), let low = iterator.next(),
                    let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
                else { return self }
                bytes.append(value)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
