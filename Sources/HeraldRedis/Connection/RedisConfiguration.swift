/// Where and how a `RedisConnection` connects. Every field has a default suited to a local
/// Redis; `init(url:)` reads the `redis://[:password@]host[:port][/db]` form operators pass
/// in, and `redis+cluster://[:password@]host:port,host:port,...` for a Redis Cluster.
public struct RedisConfiguration: Sendable, Hashable {
    /// Host name or IP address. Default `127.0.0.1`. For a cluster: its first seed node.
    public var host: String
    /// TCP port. Default `6379`.
    public var port: Int
    /// The seed nodes of a Redis Cluster, nil for a single Redis. Any one of them that answers
    /// tells the client the rest of the cluster.
    public var cluster: [RedisClusterEndpoint]?
    /// Redirections (`MOVED`, `ASK`) one command may follow before it fails. Default 5: a slot
    /// can be asked and then moved, twice during a two-step reshard.
    public var maximumRedirects: Int
    /// Seconds a cluster command keeps retrying `TRYAGAIN`, `CLUSTERDOWN`, `LOADING` and
    /// unreachable masters (a failover in progress) before it fails. Default 30.
    public var clusterRetrySeconds: Double
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
        maximumBackoff: Double = 1,
        cluster: [RedisClusterEndpoint]? = nil,
        maximumRedirects: Int = 5,
        clusterRetrySeconds: Double = 30
    ) {
        self.host = host
        self.port = port
        self.cluster = cluster
        self.maximumRedirects = maximumRedirects
        self.clusterRetrySeconds = clusterRetrySeconds
        self.username = username
        self.password = password
        self.database = database
        self.connectTimeout = connectTimeout
        self.commandTimeout = commandTimeout
        self.connectAttempts = connectAttempts
        self.initialBackoff = initialBackoff
        self.maximumBackoff = maximumBackoff
    }

    /// Parses `redis://[[username]:password@]host[:port][/database]`, or
    /// `redis+cluster://[[username]:password@]host[:port],host[:port],...` for the seed nodes
    /// of a Redis Cluster; other fields keep their defaults. Throws `.connection` naming the
    /// offending part.
    public init(url: String) throws {
        self.init()
        let lowered = url.lowercased()
        if lowered.hasPrefix("rediss://") || lowered.hasPrefix("rediss+cluster://") {
            throw RedisError(code: .connection, message: Self.noTLSMessage)
        }
        let isCluster = url.hasPrefix(Self.clusterScheme)
        let scheme = isCluster ? Self.clusterScheme : "redis://"
        guard url.hasPrefix(scheme) else {
            throw RedisError(
                code: .connection, message: "expected a redis:// or redis+cluster:// URL, got \"\(Self.redacting(url))\"")
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
        if isCluster {
            try parseSeeds(rest, url)
            return
        }
        try parseHostPortAndDatabase(rest, url)
    }

    static let clusterScheme = "redis+cluster://"

    /// `host:port,host:port,...` (a path other than `/` or `/0` is refused: a cluster has only database 0).
    private mutating func parseSeeds(_ text: Substring, _ url: String) throws {
        var list = text
        if let slash = list.firstIndex(of: "/") {
            let path = list[list.index(after: slash)...]
            guard path.isEmpty || path == "0" else {
                throw RedisError(
                    code: .connection,
                    message: "database \"\(path)\" in \(Self.redacting(url)): a Redis Cluster has only database 0")
            }
            list = list[..<slash]
        }
        var seeds: [RedisClusterEndpoint] = []
        for part in list.split(separator: ",", omittingEmptySubsequences: false) {
            let (seedHost, seedPort) = try Self.hostAndPort(part, url)
            guard !seedHost.isEmpty else {
                throw RedisError(code: .connection, message: "seed node \"\(part)\" in \(Self.redacting(url)) is not host:port")
            }
            seeds.append(RedisClusterEndpoint(host: seedHost, port: seedPort ?? 6379))
        }
        host = seeds[0].host
        port = seeds[0].port
        cluster = seeds
    }

    private mutating func parseHostPortAndDatabase(_ rest: Substring, _ url: String) throws {
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
        let (parsedHost, parsedPort) = try Self.hostAndPort(authority, url)
        host = parsedHost.isEmpty ? "127.0.0.1" : parsedHost
        port = parsedPort ?? port
    }

    /// `host`, `host:port`, `[v6]` or `[v6]:port`; the port is nil when not given.
    private static func hostAndPort(_ authority: Substring, _ url: String) throws -> (String, Int?) {
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
            // IPv6 literal: [::1]:6379
            let host = String(authority[authority.index(after: authority.startIndex)..<close])
            let afterClose = authority[authority.index(after: close)...]
            return (host, afterClose.hasPrefix(":") ? try port(afterClose.dropFirst(), url) : nil)
        }
        if let colon = authority.lastIndex(of: ":") {
            return (String(authority[..<colon]), try port(authority[authority.index(after: colon)...], url))
        }
        return (String(authority), nil)
    }

    private static func port(_ text: Substring, _ url: String) throws -> Int {
        guard let value = Int(text), (1...65535).contains(value) else {
            throw RedisError(code: .connection, message: "port \"\(text)\" in \(Self.redacting(url)) is not a TCP port")
        }
        return value
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

    /// `host:port` for messages; `cluster(host:port,...)` for a cluster's seeds.
    public var endpoint: String {
        if let cluster { return "cluster(\(cluster.map(\.description).joined(separator: ",")))" }
        return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// The configuration of one node of this cluster: same credentials and timeouts.
    func node(_ endpoint: RedisClusterEndpoint) -> RedisConfiguration {
        var node = self
        node.cluster = nil
        node.host = endpoint.host
        node.port = endpoint.port
        return node
    }
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
