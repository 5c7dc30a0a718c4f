/// Which master serves each of the 16384 slots, read from `CLUSTER SLOTS` and corrected by
/// `MOVED` replies. A value: the router swaps in a new map after a refresh.
public struct RedisClusterSlotMap: Equatable, Sendable {
    /// Masters in the order first seen; `owners` indexes into it.
    public private(set) var masters: [RedisClusterEndpoint] = []
    /// Replicas of each master (same indices as `masters`).
    public private(set) var replicas: [[RedisClusterEndpoint]] = []
    /// The master index of each slot, `uncovered` where no node serves it.
    private var owners = [UInt16](repeating: RedisClusterSlotMap.uncovered, count: RedisClusterSlot.count)
    private static let uncovered = UInt16.max

    public init() {}

    /// The master serving `slot`, or nil while it is uncovered.
    public func master(forSlot slot: Int) -> RedisClusterEndpoint? {
        let owner = owners[slot]
        return owner == Self.uncovered ? nil : masters[Int(owner)]
    }

    /// How many slots no master serves (a healthy cluster has none).
    public var uncoveredSlotCount: Int { owners.lazy.filter { $0 == Self.uncovered }.count }

    /// The runs of slots no master serves.
    public var uncoveredRanges: [ClosedRange<Int>] {
        var ranges: [ClosedRange<Int>] = []
        var slot = 0
        while slot < RedisClusterSlot.count {
            guard owners[slot] == Self.uncovered else {
                slot += 1
                continue
            }
            var end = slot
            while end + 1 < RedisClusterSlot.count, owners[end + 1] == Self.uncovered { end += 1 }
            ranges.append(slot...end)
            slot = end + 1
        }
        return ranges
    }

    /// The slots each master serves, as ranges, in the order of `masters`.
    public var slotRanges: [[ClosedRange<Int>]] {
        var ranges = [[ClosedRange<Int>]](repeating: [], count: masters.count)
        var slot = 0
        while slot < RedisClusterSlot.count {
            let owner = owners[slot]
            var end = slot
            while end + 1 < RedisClusterSlot.count, owners[end + 1] == owner { end += 1 }
            if owner != Self.uncovered { ranges[Int(owner)].append(slot...end) }
            slot = end + 1
        }
        return ranges
    }

    /// A `MOVED` reply: `slot` is now served by `endpoint` (a master possibly not yet known).
    public mutating func assign(slot: Int, to endpoint: RedisClusterEndpoint) {
        owners[slot] = UInt16(index(of: endpoint))
    }

    private mutating func index(of endpoint: RedisClusterEndpoint) -> Int {
        if let index = masters.firstIndex(of: endpoint) { return index }
        masters.append(endpoint)
        replicas.append([])
        return masters.count - 1
    }

    /// Parses a `CLUSTER SLOTS` reply: one entry per range, `[start, end, master, replica...]`
    /// where each node is `[host, port, id, ...]`. An empty host means the node that answered
    /// (`answeredBy`).
    public init(clusterSlots reply: RedisValue, answeredBy: RedisClusterEndpoint) throws(RedisClusterTopologyError) {
        guard case .array(let entries) = reply else { throw .malformed("CLUSTER SLOTS did not answer with an array") }
        for (position, entry) in entries.enumerated() {
            guard case .array(let fields) = entry, fields.count >= 3,
                let start = fields[0].int, let end = fields[1].int,
                0 <= start, start <= end, end < RedisClusterSlot.count
            else { throw .malformed("CLUSTER SLOTS entry \(position) is not [start, end, master, ...]") }
            let nodes = try fields[2...].map { node throws(RedisClusterTopologyError) in
                try Self.endpoint(node, answeredBy: answeredBy, entry: position)
            }
            let master = index(of: nodes[0])
            for replica in nodes.dropFirst() where !replicas[master].contains(replica) { replicas[master].append(replica) }
            for slot in start...end { owners[slot] = UInt16(master) }
        }
    }

    private static func endpoint(
        _ node: RedisValue, answeredBy: RedisClusterEndpoint, entry: Int
    ) throws(RedisClusterTopologyError) -> RedisClusterEndpoint {
        guard case .array(let parts) = node, parts.count >= 2, let host = parts[0].string, let port = parts[1].int,
            (1...65_535).contains(port)
        else { throw .malformed("CLUSTER SLOTS entry \(entry) has a node that is not [host, port, ...]") }
        return RedisClusterEndpoint(host: host.isEmpty || host == "?" ? answeredBy.host : host, port: port)
    }
}

/// A topology reply Herald cannot use.
public struct RedisClusterTopologyError: Error, Equatable, CustomStringConvertible {
    public var description: String
    static func malformed(_ text: String) -> Self { Self(description: text) }
}
