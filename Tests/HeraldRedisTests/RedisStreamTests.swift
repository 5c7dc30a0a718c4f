import Foundation
import HeraldRedis
import HeraldTestSupport
import Testing

@Suite("Streaming replies with read-ahead")
struct RedisStreamTests {
    /// Hashes of different sizes under `prefix`: hash `i` has `i * 40` fields.
    private func seedHashes(_ connection: RedisConnection, prefix: String, count: Int) async throws -> [String] {
        var keys: [String] = []
        for index in 0..<count {
            let key = "\(prefix)h\(index)"
            keys.append(key)
            var command = RedisCommand("HSET", key)
            for field in 0..<max(1, index * 40) {
                command.append("f\(field)")
                command.append(String(repeating: "v", count: 200))
            }
            _ = try await connection.send(command)
        }
        return keys
    }

    @Test("every reply is handed over once, in order, error replies included")
    func repliesInOrder() async throws {
        let redis = try TestRedis()
        let connection = try await redis.connect()
        let prefix = uniquePrefix()
        let keys = try await seedHashes(connection, prefix: prefix, count: 12)
        _ = try await connection.send(.set(prefix + "string", "not a hash"))
        let commands = keys.map { RedisCommand.hgetall($0) } + [.hgetall(prefix + "string"), .hgetall(prefix + "missing")]

        var seen: [(index: Int, elements: Int, isError: Bool)] = []
        try connection.streamRepliesBlocking(commands) { index, reply in
            seen.append((index, reply.isArray ? reply.count : -1, connection.error(in: reply, of: commands[index]) != nil))
        }
        #expect(seen.map(\.index) == Array(commands.indices))
        #expect(seen.prefix(keys.count).map(\.elements) == keys.indices.map { 2 * max(1, $0 * 40) })
        #expect(seen[keys.count].isError)
        #expect(seen[keys.count + 1].elements == 0)
        // The connection is in step afterwards.
        #expect(try connection.sendBlocking(.ping) == .simpleString("PONG"))
    }

    @Test("a connection killed mid-stream is rebuilt and the stream goes on from the first reply not handled")
    func resumesAfterKill() async throws {
        let redis = try TestRedis()
        let connection = try await redis.connect()
        let killer = try await redis.connect()
        let prefix = uniquePrefix()
        let keys = try await seedHashes(connection, prefix: prefix, count: 8)
        let id = try connection.sendBlocking(RedisCommand("CLIENT", "ID")).int ?? -1

        var handled: [Int] = []
        try connection.streamRepliesBlocking(keys.map { .hgetall($0) }) { index, reply in
            handled.append(index)
            #expect(reply.count == 2 * max(1, index * 40))
            if index == 2 {
                _ = try killer.sendBlocking(RedisCommand("CLIENT", "KILL", "ID", id))
            }
        }
        #expect(handled == Array(keys.indices))
        #expect(connection.statistics.retries == 1)
        #expect(connection.statistics.reconnects == 1)
    }

    @Test("commands a reply's handler adds are streamed after those queued, numbered after them, and survive a kill")
    func handlerAddsCommands() async throws {
        let redis = try TestRedis()
        let connection = try await redis.connect()
        let killer = try await redis.connect()
        let prefix = uniquePrefix()
        let keys = try await seedHashes(connection, prefix: prefix, count: 12)
        let id = try connection.sendBlocking(RedisCommand("CLIENT", "ID")).int ?? -1

        // The first three hashes are asked for; hash i's reply asks for hashes 3i + 3 to
        // 3i + 5, and the fourth reply handled kills the connection.
        var handled: [Int] = []
        var asked = Array(keys.prefix(3))
        try connection.streamRepliesBlocking(asked.map { .hgetall($0) }, costs: [1, 1, 1], budget: 4) { index, reply, tail in
            handled.append(index)
            #expect(reply.count == 2 * max(1, keys.firstIndex(of: asked[index])! * 40), "reply \(index)")
            for next in (3 * index + 3)...(3 * index + 5) where next < keys.count {
                asked.append(keys[next])
                tail.append(.hgetall(keys[next]), cost: 1)
            }
            if index == 3 { _ = try killer.sendBlocking(RedisCommand("CLIENT", "KILL", "ID", id)) }
        }
        #expect(handled == Array(keys.indices))
        #expect(asked == keys)
        #expect(connection.statistics.reconnects == 1)
        #expect(try connection.sendBlocking(.ping) == .simpleString("PONG"))
    }

    @Test("an error thrown by the caller ends the stream, and the connection still answers in step")
    func callerErrorEndsStream() async throws {
        struct Stop: Error {}
        let redis = try TestRedis()
        let connection = try await redis.connect()
        let prefix = uniquePrefix()
        let keys = try await seedHashes(connection, prefix: prefix, count: 6)

        var handled: [Int] = []
        #expect(throws: Stop.self) {
            try connection.streamRepliesBlocking(keys.map { .hgetall($0) }) { index, _ in
                handled.append(index)
                if index == 1 { throw Stop() }
            }
        }
        #expect(handled == [0, 1])
        // The read-ahead reply owed for command 2 must not be taken for this command's reply.
        #expect(try connection.sendBlocking(.get(prefix + "nothing")) == .null)
        #expect(try connection.sendBlocking(.ping) == .simpleString("PONG"))
    }

    @Test("with costs, small replies are pipelined up to the budget; without, one read ahead")
    func budgetPipelinesSmallReplies() async throws {
        let redis = try TestRedis()
        let connection = try await redis.connect()
        let observer = try await redis.connect()
        let prefix = uniquePrefix()
        let keys = try await seedHashes(connection, prefix: prefix, count: 6)
        let id = try connection.sendBlocking(RedisCommand("CLIENT", "ID")).int ?? -1
        // The last command is told apart by name: Redis shows each client's last command.
        let commands = keys.map { RedisCommand.hgetall($0) } + [RedisCommand("ECHO", "last", isReadOnly: true)]

        /// The last command Redis ran for the streaming connection, once it shows `expected`
        /// or after a second.
        func lastCommand(waitingFor expected: String) throws -> String {
            var last = ""
            for _ in 0..<50 {
                let line = try observer.sendBlocking(RedisCommand("CLIENT", "LIST", "ID", id)).string ?? ""
                last = line.split(separator: " ").first { $0.hasPrefix("cmd=") }.map { String($0.dropFirst(4)) } ?? ""
                if last == expected { break }
                usleep(20_000)
            }
            return last
        }

        for budgeted in [true, false] {
            var firstSeen: [String] = []
            var handled: [Int] = []
            let costs = budgeted ? commands.map { _ in 1 } : nil
            try connection.streamRepliesBlocking(commands, costs: costs, budget: commands.count) { index, reply in
                handled.append(index)
                if index == 0 { firstSeen.append(try lastCommand(waitingFor: "echo")) }
                if index < keys.count { #expect(reply.count == 2 * max(1, index * 40)) }
            }
            #expect(handled == Array(commands.indices))
            // Budgeted, every command went out at once and Redis had run the last one while
            // the first reply was handled; with one read ahead, Redis had run the second only.
            #expect(firstSeen == [budgeted ? "echo" : "hgetall"])
        }
    }
}
