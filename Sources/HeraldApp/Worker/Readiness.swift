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
        async let kafka = kafkaAnswers()
        async let redis = redisAnswers()
        let (kafkaReady, redisReady) = await (kafka, redis)
        return kafkaReady && redisReady
    }

    private func kafkaAnswers() async -> Bool {
        (try? await admin.listTopics(timeout: .seconds(2))) != nil
    }

    private func redisAnswers() async -> Bool {
        (try? await redis.withConnection { try await $0.send(.ping) }) != nil
    }
}
