import Foundation
import HeraldRedis
import HeraldTestSupport
import Testing

extension TestRedis {
    /// A configuration for this server with short backoff so failure tests finish quickly.
    var configuration: RedisConfiguration {
        var configuration = (try? RedisConfiguration(url: url)) ?? RedisConfiguration(host: host, port: port)
        configuration.connectAttempts = 20
        configuration.initialBackoff = 0.02
        configuration.maximumBackoff = 0.2
        return configuration
    }

    func connect() async throws -> RedisConnection {
        try await RedisConnection.connect(configuration: configuration)
    }
}

/// A key prefix no other test (or earlier run against an external Redis) uses. It is a hash
/// tag, so a test's keys share one cluster slot and may meet in one multi-key command.
func uniquePrefix(_ test: String = #function) -> String {
    "herald-test:{\(test.prefix(while: { $0 != "(" })):\(UUID().uuidString.prefix(8))}:"
}

extension Trait where Self == ConditionTrait {
    /// For tests that stop or restart the server: skipped when HERALD_TEST_REDIS_URL points
    /// at an external Redis, which the tests do not own.
    static var ownsRedisProcess: Self {
        .enabled(
            if: (ProcessInfo.processInfo.environment["HERALD_TEST_REDIS_URL"] ?? "").isEmpty,
            "HERALD_TEST_REDIS_URL points at an external Redis that these tests cannot restart"
        )
    }
}
