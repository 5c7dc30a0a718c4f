import HeraldRedis
import HeraldTestSupport
import Testing

@Suite("Reconnecting")
struct RedisReconnectTests {
    @Test("a connection survives a Redis restart: the next command succeeds", .ownsRedisProcess)
    func survivesRestart() async throws {
        let redis = try TestRedis()
        let connection = try await redis.connect()
        let key = uniquePrefix() + "k"
        _ = try await connection.send(.set(key, "before"))

        try redis.restart()

        // A write: must not be lost or duplicated, and must not fail.
        #expect(try await connection.send(.set(key, "after")) == .simpleString("OK"))
        #expect(try await connection.send(.get(key)).string == "after")
        #expect(connection.statistics.reconnects == 1)

        try redis.restart()
        let results = try await connection.pipeline([.incr(key + ":n"), .incr(key + ":n")])
        #expect(try results.map { try $0.get() } == [.integer(1), .integer(2)])
        #expect(connection.statistics.reconnects == 2)
    }

    @Test("while Redis is down commands fail with .connection; once it is back they succeed", .ownsRedisProcess)
    func downThenBack() async throws {
        let redis = try TestRedis()
        var configuration = redis.configuration
        configuration.connectAttempts = 2
        let connection = try await RedisConnection.connect(configuration: configuration)

        redis.stop()
        let error = await #expect(throws: RedisError.self) { try await connection.send(.ping) }
        #expect(error?.code == .connection)
        #expect(error?.message.contains(configuration.endpoint) == true)

        try redis.restart()
        #expect(try await connection.send(.ping) == .simpleString("PONG"))
    }

    @Test("a command timeout fails that command and the connection recovers")
    func timeoutThenRecover() async throws {
        let redis = try TestRedis()
        var configuration = redis.configuration
        configuration.commandTimeout = 0.2
        let connection = try await RedisConnection.connect(configuration: configuration)
        let key = uniquePrefix() + "empty-list"

        // BLPOP on an empty list holds the reply for 2 s, longer than the command timeout.
        let error = await #expect(throws: RedisError.self) { try await connection.send(RedisCommand("BLPOP", key, 2)) }
        #expect(error?.code == .timeout)
        #expect(error?.message.contains("BLPOP") == true)

        #expect(try await connection.send(.ping) == .simpleString("PONG"))
    }

    @Test("a closed connection refuses commands")
    func closedConnection() async throws {
        let redis = try TestRedis()
        let connection = try await redis.connect()
        connection.close()
        let error = await #expect(throws: RedisError.self) { try await connection.send(.ping) }
        #expect(error?.code == .closed)
    }

    @Test("a wrong password is a .connection error naming the server's reason")
    func wrongPassword() async throws {
        let redis = try TestRedis()
        var configuration = redis.configuration
        configuration.password = "not-the-password"
        let error = await #expect(throws: RedisError.self) { try await RedisConnection.connect(configuration: configuration) }
        #expect(error?.code == .connection)
        #expect(error?.message.contains("AUTH") == true)
    }
}
