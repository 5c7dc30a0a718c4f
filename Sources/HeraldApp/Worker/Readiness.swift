import HeraldKafka
import HeraldRedis
import HeraldRegistry

/// Answers `/health/ready`: true only when the broker lists topics and Redis holds a whole
/// registration index (`IndexEpoch`), each within two seconds, and on a Redis Cluster every
/// hash slot has a master.
public struct Readiness: Sendable {
    let admin: KafkaAdmin
    let redis: RedisConnectionPool
    let layout: SlotLayout

    public init(admin: KafkaAdmin, redis: RedisConnectionPool, layout: SlotLayout) {
        self.admin = admin
        self.redis = redis
        self.layout = layout
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

    /// Within two seconds even while a Redis Cluster fails over (commands wait out the
    /// cluster's retry budget then): a probe that hangs says nothing.
    private func redisAnswers() async -> Bool {
        let (redis, layout) = (redis, layout)
        return await answer(within: .seconds(2)) {
            guard let reply = try? await redis.withConnection({ try await $0.send(IndexEpoch.read(layout)) }) else { return false }
            guard (try? IndexEpoch.require(reply, layout: layout)) != nil else { return false }
            return await redis.everySlotServed()
        } ?? false
    }
}
