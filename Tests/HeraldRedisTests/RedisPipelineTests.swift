import Foundation
import HeraldRedis
import HeraldTestSupport
import Testing

@Suite("Pipelines")
struct RedisPipelineTests {
    @Test("10,000 pipelined commands return 10,000 results in order")
    func tenThousandCommandsInOrder() async throws {
        let redis = try TestRedis()
        let connection = try await redis.connect()
        let prefix = uniquePrefix()
        let counter = prefix + "counter"

        // Each triple writes a key, reads it back and bumps a counter, so every result is
        // predictable from its position alone: a reordered or dropped reply shows.
        var commands: [RedisCommand] = []
        for i in 0..<10_000 {
            let round = i / 3
            switch i % 3 {
            case 0: commands.append(.set(prefix + "k\(round)", "value-\(round)"))
            case 1: commands.append(.get(prefix + "k\(round)"))
            default: commands.append(.incr(counter))
            }
        }
        let results = try await connection.pipeline(commands)

        #expect(results.count == 10_000)
        for (i, result) in results.enumerated() {
            let value = try result.get()
            let round = i / 3
            switch i % 3 {
            case 0: #expect(value == .simpleString("OK"), "result \(i)")
            case 1: #expect(value.string == "value-\(round)", "result \(i)")
            default: #expect(value == .integer(round + 1), "result \(i)")
            }
        }
        #expect(try await connection.send(.get(counter)).int == 3333)
    }

    @Test("an error reply fails only its own command inside a pipeline")
    func errorReplyIsThatCommandsFailure() async throws {
        let redis = try TestRedis()
        let connection = try await redis.connect()
        let key = uniquePrefix() + "plain"

        let results = try await connection.pipeline([
            .set(key, "text"),
            .hgetall(key),  // WRONGTYPE: the key holds a string
            .get(key),
            .incr(key),  // ERR: not an integer
            .ping,
        ])

        #expect(results.count == 5)
        #expect(try results[0].get() == .simpleString("OK"))
        #expect(throws: RedisError.self) { try results[1].get() }
        if case .failure(let error) = results[1] {
            #expect(error.code == .server)
            #expect(error.serverPrefix == "WRONGTYPE")
            #expect(error.message.contains("HGETALL"))
        }
        #expect(try results[2].get().string == "text")
        if case .failure(let error) = results[3] {
            #expect(error.serverPrefix == "ERR")
        } else {
            Issue.record("INCR on a non-integer should fail, got \(results[3])")
        }
        #expect(try results[4].get() == .simpleString("PONG"))
        // The connection is still in step after the failures.
        #expect(try await connection.send(.get(key)).string == "text")
    }

    @Test("send throws a server error with the server's prefix")
    func sendThrowsServerError() async throws {
        let redis = try TestRedis()
        let connection = try await redis.connect()
        let key = uniquePrefix() + "set"
        _ = try await connection.send(.sadd(key, ["a"]))

        let error = await #expect(throws: RedisError.self) { try await connection.send(.get(key)) }
        #expect(error?.code == .server)
        #expect(error?.serverPrefix == "WRONGTYPE")
        #expect(try await connection.send(.scard(key)) == .integer(1))
    }

    @Test("an empty pipeline sends nothing and returns no results")
    func emptyPipeline() async throws {
        let connection = RedisConnection(configuration: RedisConfiguration(host: "127.0.0.1", port: 1, connectAttempts: 1))
        #expect(try await connection.pipeline([]).isEmpty)
    }

    @Test("the blocking API works from a thread the caller owns")
    func blockingAPIOnOwnThread() async throws {
        let redis = try TestRedis()
        let configuration = redis.configuration
        let key = uniquePrefix() + "blocking"
        let values: [RedisValue] = try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                continuation.resume(
                    with: Result {
                        let connection = RedisConnection(configuration: configuration)
                        try connection.connectBlocking()
                        let results = try connection.pipelineBlocking([.sadd(key, ["x", "y", "z"]), .scard(key)])
                        return try results.map { try $0.get() } + [try connection.sendBlocking(.sismember(key, "y"))]
                    })
            }
            thread.start()
        }
        #expect(values == [.integer(3), .integer(3), .integer(1)])
    }

    @Test("replies read in place carry the same strings, nils, integers, arrays and errors as copied ones")
    func repliesReadInPlace() async throws {
        let redis = try TestRedis()
        let connection = RedisConnection(configuration: redis.configuration)
        try connection.connectBlocking()
        defer { connection.close() }
        let prefix = uniquePrefix()
        let members = (0..<500).map { "member-\($0)" }
        _ = try connection.pipelineBlocking([.set(prefix + "a", "alpha"), .set(prefix + "b", "be\u{0}ta"), .sadd(prefix + "set", members)])
        let commands: [RedisCommand] = [
            .mget([prefix + "a", prefix + "missing", prefix + "b"]),
            .sscan(prefix + "set", cursor: 0, count: 1_000),
            .incr(prefix + "counter"),
            RedisCommand("LPUSH", prefix + "a", "x"),  // WRONGTYPE
        ]
        let copied = try connection.pipelineBlocking(commands)
        try connection.withPipelineRepliesBlocking(commands) { replies in
            #expect(replies.count == 4)
            let mget = replies[0]
            #expect(mget.isArray && mget.count == 3)
            #expect(mget[0].bytes.map { Array($0) } == Array("alpha".utf8))
            #expect(mget[1].isNull && mget[1].bytes == nil)
            #expect(mget[2].bytes.map { Array($0) } == Array("be\u{0}ta".utf8))
            #expect(try copied[0].get() == .array([.bulkString(Array("alpha".utf8)), .null, .bulkString(Array("be\u{0}ta".utf8))]))

            let page = replies[1]
            #expect(page.count == 2)
            #expect(page[0].bytes.map { String(decoding: $0, as: UTF8.self) } == "0")
            let read = (0..<page[1].count).map { String(decoding: page[1][$0].bytes!, as: UTF8.self) }
            #expect(Set(read) == Set(members))
            #expect(read == (try copied[1].get().scanPage?.elements.compactMap(\.string)))

            #expect(replies[2].integer == 2)  // the copied read ran first
            #expect(replies[3].isError)
            let error = try #require(connection.error(in: replies[3], of: commands[3]))
            guard case .failure(let copiedError) = copied[3] else {
                Issue.record("LPUSH on a string succeeded")
                return
            }
            #expect(error.description == copiedError.description)
            #expect(error.serverPrefix == "WRONGTYPE")
        }
    }
}
