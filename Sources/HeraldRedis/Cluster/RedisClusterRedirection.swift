/// What an error reply from a cluster node asks the client to do.
public enum RedisClusterRedirection: Equatable, Sendable {
    /// `MOVED slot host:port`: the slot lives on another node for good; update the slot map
    /// and send the command there.
    case moved(slot: Int, endpoint: RedisClusterEndpoint)
    /// `ASK slot host:port`: the slot is being migrated and this key is already on the
    /// target; send `ASKING` and the command there once, leaving the map as it is.
    case ask(slot: Int, endpoint: RedisClusterEndpoint)
    /// `TRYAGAIN` (a multi-key command during a migration), `CLUSTERDOWN` (slots uncovered,
    /// or a failover in progress) or `LOADING`: wait a little and send it again.
    case retryLater(reason: String)

    /// The redirection an error reply's text asks for, or nil for any other error.
    public init?(errorReply text: String) {
        let words = text.split(separator: " ", omittingEmptySubsequences: true)
        guard let first = words.first else { return nil }
        switch first {
        case "MOVED", "ASK":
            guard words.count == 3, let slot = Int(words[1]), (0..<RedisClusterSlot.count).contains(slot),
                let endpoint = RedisClusterEndpoint(String(words[2]))
            else { return nil }
            self = first == "MOVED" ? .moved(slot: slot, endpoint: endpoint) : .ask(slot: slot, endpoint: endpoint)
        case "TRYAGAIN", "CLUSTERDOWN", "LOADING":
            self = .retryLater(reason: String(first))
        default:
            return nil
        }
    }
}

/// A cluster node's address as the cluster announces it.
public struct RedisClusterEndpoint: Hashable, Sendable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// `host:port`, or `[v6]:port`; the port is the text after the last colon.
    public init?(_ text: String) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
            (1...65_535).contains(port)
        else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { return nil }
        self.init(host: host, port: port)
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
