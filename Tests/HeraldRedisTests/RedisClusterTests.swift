import Foundation
import HeraldRedis
import HeraldTestSupport
import Testing

/// The cluster client against a real 3+3 Redis Cluster (`TestRedisCluster`): routing by hash
/// slot, pipelines split over masters, redirections during a migration, start-up checks.
@Suite("Redis Cluster client", .heavy, .serialized, .enabled(if: TestRedisCluster.suitesEnabled, "runs in make test's cluster pass"))
struct RedisClusterTests {
    static func configuration(_ cluster: TestRedisCluster, retrySeconds: Double = 15) throws -> RedisConfiguration {
        var configuration = try RedisConfiguration(url: cluster.url)
        configuration.clusterRetrySeconds = retrySeconds
        return configuration
    }

    @Test("a pipeline over every master answers in the caller's order; each key lives on the master of its slot")
    func routing() async throws {
        let cluster = try TestRedisCluster()
        let connection = RedisConnection(configuration: try Self.configuration(cluster))
        defer { connection.close() }
        let keys = (0..<3_000).map { "route:{\($0)}:k" }
        let writes = try connection.pipelineBlocking(keys.map { .set($0, "v-" + $0) })
        #expect(writes.allSatisfy { (try? $0.get()) == .simpleString("OK") })
        let reads = try connection.pipelineBlocking(keys.map { .get($0) })
        #expect(reads.map { try? $0.get().string } == keys.map { "v-" + $0 })
        #expect(try connection.sendBlocking(RedisCommand("DBSIZE")).int == 3_000)
        // Each master holds exactly the keys whose slot it serves.
        // Masters serving slots now (a master demoted by a failover keeps its stale keys).
        let nodes = try cluster.nodes().filter { $0.isMaster && $0.servesSlots }
        for master in nodes {
            let held = Int(try cluster.cli(master.port, "DBSIZE").trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
            let expected = keys.filter { key in master.slots.contains { $0.contains(RedisClusterSlot.of(Array(key.utf8))) } }.count
            #expect(held == expected && held > 0, "master \(master.port): \(held) keys, \(expected) expected; \(nodes)")
        }
        // A keyless command for every master: one reply each, named by the master's address.
        let perMaster = try await connection.sendToEveryMaster(RedisCommand("DBSIZE"))
        #expect(Set(perMaster.map(\.endpoint)) == Set(nodes.map { "127.0.0.1:\($0.port)" }))
        #expect(perMaster.map { $0.reply.int ?? 0 }.reduce(0, +) == 3_000)
        // The streaming read hands every reply over once, with its own index.
        var seen: [Int: String] = [:]
        try connection.streamRepliesBlocking(keys.map { RedisCommand.get($0) }) { index, reply in
            seen[index] = reply.bytes.map { String(decoding: $0, as: UTF8.self) }
        }
        #expect(seen.count == keys.count && seen.allSatisfy { $0.value == "v-" + keys[$0.key] })
        // Commands a handler adds are streamed after the others, numbered in the order added
        // (the masters' replies come interleaved, so not in the order of the keys); here the
        // added commands add more in turn.
        var asked = Array(keys.prefix(1_000))
        seen = [:]
        try connection.streamRepliesBlocking(asked.map { RedisCommand.get($0) }) { index, reply, tail in
            seen[index] = reply.bytes.map { String(decoding: $0, as: UTF8.self) }
            if index + 1_000 < keys.count {
                asked.append(keys[index + 1_000])
                tail.append(.get(keys[index + 1_000]))
            }
        }
        #expect(asked.count == keys.count && Set(asked) == Set(keys))
        #expect(seen.count == asked.count && seen.allSatisfy { $0.value == "v-" + asked[$0.key] })
        // An error thrown by the caller stops every master's stream; the connection goes on.
        struct Stop: Error {}
        var handled = 0
        #expect(throws: Stop.self) {
            try connection.streamRepliesBlocking(keys.map { RedisCommand.get($0) }) { _, _ in
                handled += 1
                if handled == 500 { throw Stop() }
            }
        }
        #expect(handled == 500)
        #expect(try connection.sendBlocking(.get(keys[0])).string == "v-" + keys[0])
        var counted = 0
        try connection.withPipelineRepliesBlocking(keys.prefix(100).map { .get($0) }) { replies in
            counted = replies.filter { !$0.isError && !$0.isNull }.count
        }
        #expect(counted == 100)
        #expect(try await connection.keys(matching: "route:*").count == 3_000)
        #expect(try connection.deleteKeysBlocking(matching: "route:*") == 3_000)
        #expect(try connection.sendBlocking(RedisCommand("DBSIZE")).int == 0)
    }

    @Test("commands a cluster cannot route are refused before anything is sent, naming keys and slots")
    func refusals() async throws {
        let cluster = try TestRedisCluster()
        let connection = RedisConnection(configuration: try Self.configuration(cluster))
        defer { connection.close() }
        let crossSlot = #expect(throws: RedisError.self) { try connection.sendBlocking(.del(["a", "b"])) }
        #expect(crossSlot?.code == .routing)
        #expect(crossSlot?.message.contains("a (slot 15495) and b (slot 3300)") == true)
        let scan = #expect(throws: RedisError.self) { try connection.sendBlocking(.scan(cursor: 0)) }
        #expect(scan?.message.contains("keys(matching:)") == true)
        #expect(throws: RedisError.self) { try connection.pipelineBlocking([.get("a"), .flushall]) }
        // One hash tag: one slot, accepted.
        #expect(try connection.sendBlocking(.del(["{t}a", "{t}b"])).int == 0)

        // The single-node client refuses the same cross-slot command.
        let single = try TestRedis()
        let plain = RedisConnection(configuration: single.configuration)
        defer { plain.close() }
        #expect(throws: RedisError.self) { try plain.sendBlocking(.del(["a", "b"])) }
    }

    @Test("a script flushed from one master is loaded again there, and only there")
    func noscriptPerMaster() throws {
        let cluster = try TestRedisCluster()
        let connection = RedisConnection(configuration: try Self.configuration(cluster))
        defer { connection.close() }
        let script = RedisScript("return redis.call('INCR', KEYS[1])")
        let keys = (0..<30).map { "script:{\($0)}" }
        _ = try connection.pipelineBlocking(keys.map { .evalScript(script, keys: [$0], arguments: [String]()) })
        let victim = try cluster.masters()[1]
        try cluster.cli(victim, "SCRIPT", "FLUSH")
        let before = connection.statistics.scriptReloads
        let results = try connection.pipelineBlocking(keys.map { .evalScript(script, keys: [$0], arguments: [String]()) })
        #expect(results.allSatisfy { (try? $0.get().int) == 2 })
        #expect(connection.statistics.scriptReloads == before + 1)
    }

    @Test("a slot moved by hand: the stale client follows MOVED and patches its map")
    func moved() throws {
        let cluster = try TestRedisCluster()
        let connection = RedisConnection(configuration: try Self.configuration(cluster))
        defer { connection.close() }
        let key = "moved:{m}:k"
        _ = try connection.sendBlocking(.set(key, "here"))
        let slot = RedisClusterSlot.of(Array(key.utf8))
        let source = try #require(try cluster.master(ofSlot: slot))
        let target = try #require(try cluster.masters().first { $0 != source })
        try Self.migrate(cluster, slot: slot, from: source, to: target, keys: [key])
        try Self.finish(cluster, slot: slot, to: target)
        #expect(try connection.sendBlocking(.get(key)).string == "here")
        #expect(connection.statistics.moved == 1)
        #expect(try connection.sendBlocking(.get(key)).string == "here")
        #expect(connection.statistics.moved == 1)
    }

    @Test("during a migration: ASK for a moved key; a guarded script waits (TRYAGAIN) until the slot is whole")
    func migration() throws {
        let cluster = try TestRedisCluster()
        let connection = RedisConnection(configuration: try Self.configuration(cluster))
        defer { connection.close() }
        let moved = "mig:{7}:a"
        let stays = "mig:{7}:b"
        _ = try connection.pipelineBlocking([.set(moved, "1"), .set(stays, "2")])
        let slot = RedisClusterSlot.of(Array(moved.utf8))
        let source = try #require(try cluster.master(ofSlot: slot))
        let target = try #require(try cluster.masters().first { $0 != source })
        try Self.migrate(cluster, slot: slot, from: source, to: target, keys: [moved])

        #expect(try connection.sendBlocking(.get(moved)).string == "1")
        #expect(connection.statistics.asked == 1)
        #expect(try connection.sendBlocking(.get(stays)).string == "2")

        // Like Herald's registry scripts: two declared keys that never exist.
        let script = RedisScript("return redis.call('GET', '\(stays)')")
        let finisher = Thread {
            usleep(400_000)
            _ = try? cluster.cli(source, "MIGRATE", "127.0.0.1", String(target), "", "0", "5000", "KEYS", stays)
            try? Self.finish(cluster, slot: slot, to: target)
        }
        finisher.start()
        let reply = try connection.sendBlocking(.evalScript(script, keys: ["mig:{7}:", "mig:{7}:~"], arguments: [String]()))
        #expect(reply.string == "2")
        #expect(connection.statistics.clusterRetries > 0)
        #expect(try cluster.master(ofSlot: slot) == target)
        try waitUntil(timeout: 10, "redis-cli --cluster check to pass") { (try? cluster.isConsistent()) == true }
    }

    @Test("start-up checks name the problem in one line")
    func startupChecks() async throws {
        let closed = freeLocalPort()
        let nobody = RedisConnection(configuration: try RedisConfiguration(url: "redis+cluster://127.0.0.1:\(closed)"))
        let unreachable = await #expect(throws: RedisError.self) { try await nobody.verify() }
        #expect(unreachable?.message.contains("no cluster node answered: 127.0.0.1:\(closed)") == true)

        let single = try TestRedis()
        let notCluster = RedisConnection(configuration: try RedisConfiguration(url: "redis+cluster://127.0.0.1:\(single.port)"))
        let plain = await #expect(throws: RedisError.self) { try await notCluster.verify() }
        #expect(plain?.message.contains("is not a cluster node") == true)
        #expect(plain?.message.contains("use redis://127.0.0.1:\(single.port)") == true)

        let cluster = try TestRedisCluster()
        let wrongScheme = RedisConnection(configuration: RedisConfiguration(host: "127.0.0.1", port: cluster.ports[0]))
        let node = await #expect(throws: RedisError.self) { try await wrongScheme.verify() }
        #expect(node?.message.contains("use redis+cluster://127.0.0.1:\(cluster.ports[0])") == true)

        let good = RedisConnection(configuration: try Self.configuration(cluster))
        try await good.verify()
        let pool = RedisConnectionPool(configuration: try Self.configuration(cluster), size: 1)
        defer { pool.shutdown() }
        #expect(await pool.everySlotServed())
        for port in cluster.ports { try cluster.cli(port, "CLUSTER", "DELSLOTSRANGE", "0", "100") }
        let uncovered = await #expect(throws: RedisError.self) { try await good.verify() }
        #expect(uncovered?.message.contains("101 hash slots have no master (0-100)") == true)
        #expect(await !pool.everySlotServed())
    }

    @Test("redirections are bounded: a node that answers every command with MOVED to itself fails it after 5 rounds")
    func redirectionBound() throws {
        // A stand-in cluster node: CLUSTER SLOTS says it serves every slot, and every other
        // command is answered MOVED to itself, for ever.
        let port = freeLocalPort()
        let scratch = try ToolPaths.scratchDirectory("moved-loop")
        let server = try ChildProcess(
            name: "moved-loop", executable: "/usr/bin/env", arguments: ["python3", "-c", Self.movedLoop, String(port)],
            logFile: scratch.appendingPathComponent("server.log"))
        defer { server.stop(signal: SIGKILL) }
        try waitUntil(timeout: 10, "the stand-in node to listen") { isAcceptingConnections(port: port) }
        let connection = RedisConnection(configuration: try RedisConfiguration(url: "redis+cluster://127.0.0.1:\(port)"))
        defer { connection.close() }
        let error = #expect(throws: RedisError.self) { try connection.sendBlocking(.get("k")) }
        #expect(error?.code == .cluster)
        #expect(error?.message.contains("more than 5 redirections in a row") == true)
        #expect(connection.statistics.moved == 6)
    }

    static let movedLoop = """
        import socket, sys, threading
        port = int(sys.argv[1])
        def reply(words):
            if [w.upper() for w in words[:2]] == [b"CLUSTER", b"SLOTS"]:
                return b"*1\\r\\n*3\\r\\n:0\\r\\n:16383\\r\\n*2\\r\\n$9\\r\\n127.0.0.1\\r\\n:%d\\r\\n" % port
            return b"-MOVED 0 127.0.0.1:%d\\r\\n" % port
        def serve(conn):
            data = b""
            while True:
                chunk = conn.recv(65536)
                if not chunk: return
                data += chunk
                while True:
                    lines = data.split(b"\\r\\n")
                    if not lines[0].startswith(b"*") or len(lines) < 1 + 2 * int(lines[0][1:]): break
                    count = int(lines[0][1:])
                    words = [lines[2 + 2 * i] for i in range(count)]
                    data = b"\\r\\n".join(lines[1 + 2 * count:])
                    conn.sendall(reply(words))
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen()
        while True:
            conn, _ = listener.accept()
            threading.Thread(target=serve, args=(conn,), daemon=True).start()
        """

    /// Starts moving `slot` from `source` to `target` and moves `keys` of it, as
    /// `redis-cli --cluster reshard` does one slot at a time.
    static func migrate(_ cluster: TestRedisCluster, slot: Int, from source: Int, to target: Int, keys: [String]) throws {
        try cluster.cli(target, "CLUSTER", "SETSLOT", String(slot), "IMPORTING", try cluster.nodeId(source))
        try cluster.cli(source, "CLUSTER", "SETSLOT", String(slot), "MIGRATING", try cluster.nodeId(target))
        for key in keys { try cluster.cli(source, "MIGRATE", "127.0.0.1", String(target), key, "0", "5000") }
    }

    /// Ends a migration: every master learns that `target` serves `slot`.
    static func finish(_ cluster: TestRedisCluster, slot: Int, to target: Int) throws {
        let id = try cluster.nodeId(target)
        for master in try cluster.masters() { try cluster.cli(master, "CLUSTER", "SETSLOT", String(slot), "NODE", id) }
    }
}
