import HeraldRedis
import HeraldTestSupport
import Testing

@Suite("hiredis runtime version")
struct RedisRuntimeTests {
    @Test(
        "version from the library file name",
        arguments: [
            ("/usr/lib/x86_64-linux-gnu/libhiredis.so.0.14", "0.14"),
            ("/usr/lib/x86_64-linux-gnu/libhiredis.so.1.1.0", "1.1.0"),
            ("/opt/homebrew/lib/libhiredis.1.1.0.dylib", "1.1.0"),
            ("/usr/lib/libhiredis.so", nil),
        ] as [(String, String?)])
    func versionFromFileName(path: String, expected: String?) {
        #expect(RedisRuntime.versionInFileName(path) == expected)
    }

    @Test("the reported version agrees with the header and the mapped library")
    func reportedVersion() throws {
        let header = RedisRuntime.headerVersion
        #expect(header.split(separator: ".").count == 3)
        #if os(Linux)
            // The test binary links libhiredis dynamically, so the loader mapped it.
            let path = try #require(RedisRuntime.loadedLibraryPath)
            #expect(path.contains("libhiredis"))
            let fileVersion = try #require(RedisRuntime.versionInFileName(path))
            // Reported: the header's fuller version when the file agrees with it, else the file's.
            if header.hasPrefix(fileVersion) {
                #expect(RedisRuntime.hiredisVersion == header)
            } else {
                #expect(RedisRuntime.hiredisVersion == fileVersion)
            }
        #else
            #expect(!RedisRuntime.hiredisVersion.isEmpty)
        #endif
    }
}

@Suite("Binary-safe arguments and replies")
struct RedisBinarySafetyTests {
    static let payloads: [[UInt8]] = [
        [0x00],
        [0x61, 0x00, 0x62, 0x00, 0x00],  // a\0b\0\0
        [0xFF, 0xFE, 0xC3, 0x28, 0x80],  // invalid UTF-8
        [0x0D, 0x0A, 0x24, 0x33, 0x0D, 0x0A],  // "\r\n$3\r\n": RESP framing inside a value
        [],
        Array(0...255).map(UInt8.init),
    ]

    @Test("values round trip byte for byte through SET/GET, HSET/HGETALL and SADD/SMEMBERS", arguments: payloads)
    func roundTrip(payload: [UInt8]) async throws {
        let redis = try TestRedis()
        let connection = try await redis.connect()
        let prefix = uniquePrefix()
        // The key itself carries the payload too.
        let key: [UInt8] = Array((prefix + "k-").utf8) + payload

        let results = try await connection.pipeline([
            .set(key, payload),
            .get(key),
            .hset(prefix + "hash", [(payload, payload)]),
            .hgetall(prefix + "hash"),
            .sadd(prefix + "set", [payload]),
            .smembers(prefix + "set"),
            .exists(key),
        ])
        #expect(try results[1].get() == .bulkString(payload))
        #expect(try results[3].get() == .array([.bulkString(payload), .bulkString(payload)]))
        #expect(try results[5].get() == .array([.bulkString(payload)]))
        #expect(try results[6].get() == .integer(1))
    }

    @Test("invalid UTF-8 has no string view but keeps its bytes")
    func invalidUTF8HasNoString() {
        let value = RedisValue.bulkString([0xFF, 0x00])
        #expect(value.string == nil)
        #expect(value.bytes == [0xFF, 0x00])
    }
}
