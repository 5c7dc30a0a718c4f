import HeraldRedis
import Testing

@Suite("Configuration")
struct RedisConfigurationTests {
    struct URLCase: Sendable, CustomTestStringConvertible {
        var url: String
        var host: String
        var port: Int
        var database: Int
        var password: String?
        var testDescription: String { url }
    }

    @Test(
        "redis:// URLs",
        arguments: [
            URLCase(url: "redis://127.0.0.1:6390", host: "127.0.0.1", port: 6390, database: 0),
            URLCase(url: "redis://cache.internal", host: "cache.internal", port: 6379, database: 0),
            URLCase(url: "redis://cache:7000/3", host: "cache", port: 7000, database: 3),
            URLCase(url: "redis://:s3cr%40t@cache:7000/", host: "cache", port: 7000, database: 0, password: "s3cr@t"),
            URLCase(url: "redis://[::1]:6380/1", host: "::1", port: 6380, database: 1),
        ])
    func parsesURL(_ example: URLCase) throws {
        let configuration = try RedisConfiguration(url: example.url)
        #expect(configuration.host == example.host)
        #expect(configuration.port == example.port)
        #expect(configuration.database == example.database)
        #expect(configuration.password == example.password)
    }

    @Test(
        "bad URLs are rejected with the offending part",
        arguments: [
            ("http://cache:6379", "redis://"),
            ("redis://cache:port", "port"),
            ("redis://cache:70000", "70000"),
            ("redis://cache:6379/zero", "zero"),
        ])
    func rejectsURL(url: String, mentions: String) {
        let error = #expect(throws: RedisError.self) { try RedisConfiguration(url: url) }
        #expect(error?.message.contains(mentions) == true)
    }

    @Test("redis+cluster:// URLs list the seed nodes; a database other than 0 is refused")
    func clusterURL() throws {
        let configuration = try RedisConfiguration(url: "redis+cluster://:pw@a:7000,[::1]:7001,b")
        #expect(configuration.cluster?.map(\.description) == ["a:7000", "[::1]:7001", "b:6379"])
        #expect(configuration.password == "pw")
        #expect(configuration.host == "a" && configuration.port == 7000)
        #expect(configuration.endpoint == "cluster(a:7000,[::1]:7001,b:6379)")
        let database = #expect(throws: RedisError.self) { try RedisConfiguration(url: "redis+cluster://a:7000/3") }
        #expect(database?.message.contains("only database 0") == true)
        let empty = #expect(throws: RedisError.self) { try RedisConfiguration(url: "redis+cluster://a:7000,,b:7001") }
        #expect(empty?.message.contains("seed node") == true)
    }

    @Test("RedisCommand keeps arguments byte for byte and in order")
    func commandWords() {
        let command = RedisCommand.hset("h", [("f", [UInt8]([0, 1])), ("g", [UInt8]())])
        #expect(command.words == [Array("HSET".utf8), Array("h".utf8), Array("f".utf8), [0, 1], Array("g".utf8), []])
        #expect(command.name == "HSET")
        #expect(!command.isReadOnly)
        #expect(RedisCommand.mget(["a", "b"]).isReadOnly)
        #expect(RedisCommand("SET", "k", 5).words == [Array("SET".utf8), Array("k".utf8), Array("5".utf8)])
    }
}
