import HeraldKafka
import HeraldRedis

/// Answers `/health/ready`: true only when the broker lists topics and Redis answers PING,
/// each within two seconds.
public struct Readiness: Sendable {
    let admin: KafkaAdmin
    let redis: RedisConnectionPool

    public init(admin: KafkaAdmin, redis: RedisConnectionPool) {
        self.admin = admin
        self.redis = redis
    }

    public func check() async -> Bool {
        async let kafka = (try? admin.listTopics(timeout: .seconds(2))) != nil
        async let redisAnswers = (try? redis.withConnection { try await $0.send(.ping) }) != nil
        return await kafka && redisAnswers
    }
}
