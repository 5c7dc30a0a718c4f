import Foundation
import HeraldAPI
import HeraldDomain
import HeraldKafka
import HeraldPipeline
import HeraldRedis
import HeraldRegistry

/// Keeps readers' engagements: each on `herald.engagements` (compacted, one record per device
/// and action), then counted once per device and action in the event's engagement hash, which
/// the status's `engagement` funnel reads.
struct KafkaEngagementRecorder: EngagementRecording {
    let producer: KafkaProducer
    let topic: String
    let pool: RedisConnectionPool
    let layout: SlotLayout
    let ttlSeconds: Int

    func record(_ engagement: Engagement, publishedAt: Date?) async throws -> Bool {
        _ = try await producer.send(
            KafkaOutgoingMessage(topic: topic, key: Array(engagement.recordKey.utf8), value: engagement.jsonBytes()))
        let layout = layout.hub(engagement.hub)
        let fields = EngagementFunnel.fields(of: engagement, publishedAt: publishedAt)
        let reply = try await pool.withConnection {
            try await $0.evalScript(
                Self.countOnce,
                keys: [layout.engagedKey(eventId: engagement.eventId), layout.engagementsKey(eventId: engagement.eventId)],
                arguments: ["\(engagement.action.rawValue)|\(engagement.device.id)", String(ttlSeconds)] + fields)
        }
        return reply.int == 1
    }

    func counts(eventId: String, hub: HubName) async throws -> [String: Int] {
        let key = layout.hub(hub).engagementsKey(eventId: eventId)
        let reply = try await pool.withConnection { try await $0.send(.hgetall(key)) }
        return (reply.fieldValuePairs ?? [:]).compactMapValues { $0.string.flatMap { Int($0) } }
    }

    /// KEYS: the devices set, the counts hash. ARGV: the device's `<action>|<id>`, the TTL,
    /// then the fields to count. Counts them only for a device not counted before; replies 1 then.
    static let countOnce = RedisScript(
        #"""
        local added = redis.call('SADD', KEYS[1], ARGV[1])
        if added == 1 then
          for i = 3, #ARGV do redis.call('HINCRBY', KEYS[2], ARGV[i], 1) end
        end
        redis.call('EXPIRE', KEYS[1], ARGV[2])
        redis.call('EXPIRE', KEYS[2], ARGV[2])
        return added
        """#)
}
