@testable import HeraldRedis
import Testing

/// The pure parts of cluster routing: slots, keys, redirections, the slot map. The vectors
/// are Redis Cluster's own ("123456789" is its CRC16 check value, 0x31C3).
@Suite("Redis Cluster routing")
struct RedisClusterRoutingTests {
    static func slot(_ key: String) -> Int { RedisClusterSlot.of(Array(key.utf8)) }

    @Test("CRC16 and hash tags: the specification's examples")
    func slots() {
        #expect(RedisClusterSlot.crc16(Array("123456789".utf8)) == 0x31C3)
        #expect(Self.slot("123456789") == 12739)
        #expect(Self.slot("{user1000}.following") == 3443)
        #expect(Self.slot("{user1000}.followers") == 3443)
        #expect(Self.slot("foo{}{bar}") == 8363, "an empty tag: the whole key is hashed")
        #expect(Self.slot("foo{{bar}}zap") == Self.slot("{bar"), "the tag ends at the first '}'")
        #expect(Self.slot("foo{bar}{zap}") == Self.slot("bar"), "only the first tag counts")
        #expect(Self.slot("herald:{7}:views") == Self.slot("herald:{7}:meta"))
        #expect(Self.slot("herald:{7}:views") == 1716)
    }

    @Test("keys by command: single, multi, MSET pairs, scripts; none for server commands")
    func keys() throws {
        func keys(_ command: RedisCommand) throws -> [String] {
            try RedisClusterKeys.keys(of: command).map { String(decoding: $0, as: UTF8.self) }
        }
        #expect(try keys(RedisCommand("HGETALL", "herald:{3}:packs")) == ["herald:{3}:packs"])
        // The breaking alert's signal (`herald:breaking`): set by a lane, read by registration writers.
        #expect(try keys(RedisCommand("HVALS", "herald:breaking")) == ["herald:breaking"])
        #expect(try keys(RedisCommand("PEXPIRE", "herald:breaking", "3000")) == ["herald:breaking"])
        #expect(try keys(RedisCommand("MGET", "a", "b")) == ["a", "b"])
        #expect(try keys(RedisCommand("MSET", "a", "1", "b", "2")) == ["a", "b"])
        #expect(try keys(RedisCommand("EVALSHA", "0123", 2, "k1", "k2", "arg")) == ["k1", "k2"])
        #expect(try keys(RedisCommand("OBJECT", "ENCODING", "k")) == ["k"])
        #expect(try keys(.info()) == [])
        #expect(throws: RedisClusterRoutingError.malformed("EVALSHA", "the number of keys is missing or larger than the arguments")) {
            try RedisClusterKeys.keys(of: RedisCommand("EVALSHA", "0123", 3, "k1"))
        }
        #expect(throws: RedisClusterRoutingError.unknownCommand("XADD")) { try RedisClusterKeys.keys(of: RedisCommand("XADD", "s")) }
    }

    @Test("a command whose keys span two slots is refused, naming both keys")
    func crossSlot() throws {
        #expect(try RedisClusterKeys.slot(of: RedisCommand("MGET", "herald:{9}:a", "herald:{9}:b")) == Self.slot("herald:{9}:a"))
        #expect(try RedisClusterKeys.slot(of: RedisCommand("PING")) == nil)
        do {
            _ = try RedisClusterKeys.slot(of: RedisCommand("EVALSHA", "0123", 2, "herald:{1}:views", "herald:{2}:views"))
            Issue.record("a cross-slot script was routed")
        } catch {
            #expect(error.description.contains("herald:{1}:views (slot \(Self.slot("herald:{1}:views")))"))
            #expect(error.description.contains("herald:{2}:views"))
        }
    }

    @Test("MOVED, ASK, TRYAGAIN, CLUSTERDOWN and LOADING replies; anything else is an ordinary error")
    func redirections() {
        let node = RedisClusterEndpoint(host: "127.0.0.1", port: 7002)
        #expect(RedisClusterRedirection(errorReply: "MOVED 3999 127.0.0.1:7002") == .moved(slot: 3999, endpoint: node))
        #expect(RedisClusterRedirection(errorReply: "ASK 3999 127.0.0.1:7002") == .ask(slot: 3999, endpoint: node))
        #expect(
            RedisClusterRedirection(errorReply: "MOVED 1 [::1]:7000")
                == .moved(slot: 1, endpoint: RedisClusterEndpoint(host: "::1", port: 7000)))
        #expect(
            RedisClusterRedirection(errorReply: "TRYAGAIN Multiple keys request during rehashing of slot")
                == .retryLater(reason: "TRYAGAIN"))
        #expect(RedisClusterRedirection(errorReply: "CLUSTERDOWN The cluster is down") == .retryLater(reason: "CLUSTERDOWN"))
        #expect(RedisClusterRedirection(errorReply: "LOADING Redis is loading the dataset in memory") == .retryLater(reason: "LOADING"))
        #expect(RedisClusterRedirection(errorReply: "MOVED 16384 127.0.0.1:7002") == nil)
        #expect(RedisClusterRedirection(errorReply: "MOVED 12 nowhere") == nil)
        #expect(RedisClusterRedirection(errorReply: "WRONGTYPE Operation against a key holding the wrong kind of value") == nil)
    }

    @Test("the slot map from CLUSTER SLOTS: owners, replicas, uncovered slots, MOVED updates")
    func slotMap() throws {
        func node(_ host: String, _ port: Int) -> RedisValue {
            .array([.bulkString(Array(host.utf8)), .integer(port), .bulkString(Array("id".utf8))])
        }
        let reply = RedisValue.array([
            .array([.integer(0), .integer(5460), node("10.0.0.1", 7000), node("10.0.0.4", 7003)]),
            .array([.integer(5461), .integer(10922), node("", 7001)]),
            .array([.integer(12000), .integer(16383), node("10.0.0.3", 7002)]),
        ])
        let answered = RedisClusterEndpoint(host: "10.0.0.2", port: 7001)
        var map = try RedisClusterSlotMap(clusterSlots: reply, answeredBy: answered)
        #expect(map.master(forSlot: 0) == RedisClusterEndpoint(host: "10.0.0.1", port: 7000))
        #expect(map.master(forSlot: 6000) == answered, "an empty host is the node that answered")
        #expect(map.master(forSlot: 11000) == nil)
        #expect(map.uncoveredSlotCount == 12000 - 10923)
        #expect(map.replicas[0] == [RedisClusterEndpoint(host: "10.0.0.4", port: 7003)])
        #expect(map.slotRanges == [[0...5460], [5461...10922], [12000...16383]])
        let newcomer = RedisClusterEndpoint(host: "10.0.0.5", port: 7004)
        map.assign(slot: 11000, to: newcomer)
        #expect(map.master(forSlot: 11000) == newcomer && map.masters.count == 4)
        #expect(throws: RedisClusterTopologyError.self) {
            try RedisClusterSlotMap(clusterSlots: .array([.array([.integer(5), .integer(2), node("h", 1)])]), answeredBy: answered)
        }
    }

    @Test(
        "the topology: one slot-map read at a time, a newer map used instead of another read, health from healthy to degraded and back, each change reported once"
    )
    func topology() throws {
        func map(coveringAll: Bool) throws -> RedisClusterSlotMap {
            let owner = RedisValue.array([.bulkString(Array("10.0.0.1".utf8)), .integer(7000)])
            let end = coveringAll ? RedisClusterSlot.count - 1 : 100
            return try RedisClusterSlotMap(
                clusterSlots: .array([.array([.integer(0), .integer(end), owner])]),
                answeredBy: RedisClusterEndpoint(host: "10.0.0.1", port: 7000))
        }
        var topology = RedisClusterTopology()
        #expect(topology.health == .unknown && topology.map == nil)

        // First use: one caller reads, a second one waits for it.
        #expect(topology.current() == .read)
        #expect(topology.health == .refreshing)
        #expect(topology.current() == .wait)
        let whole = try map(coveringAll: true)
        #expect(topology.read(whole) == .init(from: .unknown, to: .healthy))
        #expect(topology.current() == .use(whole))
        #expect(topology.generation == 1)

        // A master goes away: degraded once, however many commands notice it.
        #expect(topology.trouble("10.0.0.2:7001 unreachable") == .init(from: .healthy, to: .degraded(reason: "10.0.0.2:7001 unreachable")))
        #expect(topology.trouble("10.0.0.2:7001 unreachable again") == nil)

        // Two callers that planned with generation 1 want a newer map: the first reads, the
        // second waits; once the read is in, a caller of generation 1 uses it without reading.
        #expect(topology.refresh(seen: 1) == .read)
        #expect(topology.refresh(seen: 1) == .wait)
        #expect(topology.trouble("noticed during the read") == nil, "a read running decides the health")
        let partial = try map(coveringAll: false)
        #expect(topology.read(partial) == nil, "still degraded: no second report")
        #expect(topology.health == .degraded(reason: "\(RedisClusterSlot.count - 101) hash slots have no master"))
        #expect(topology.refresh(seen: 1) == .use(partial))

        // A failed read keeps the map; the next read that covers every slot is healthy again.
        #expect(topology.refresh(seen: 2) == .read)
        #expect(topology.readFailed("no cluster node answered") == nil)
        #expect(topology.map == partial && topology.generation == 2)
        #expect(topology.refresh(seen: nil) == .read)
        #expect(topology.read(whole) == .init(from: .degraded(reason: "no cluster node answered"), to: .healthy))

        // MOVED patches the map without a read.
        let moved = RedisClusterEndpoint(host: "10.0.0.3", port: 7002)
        topology.moved(slot: 7, to: moved)
        #expect(topology.map?.master(forSlot: 7) == moved && topology.generation == 3)
    }
}
