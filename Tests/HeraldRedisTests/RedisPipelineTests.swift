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
                continuation.resume(with: Result {
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
}
