import Foundation
import HeraldAPI
@testable import HeraldApp
import HeraldDomain
import HeraldKafka
import HeraldPipeline
import HeraldRedis
import HeraldRegistry
import HeraldTestSupport
import Testing
import HeraldStreams

/// `POST /v1/notifications` with an id the planner already claimed: other content is a
/// conflict (409 in the API), the same content an idempotent retry that writes nothing.
@Suite("event id conflicts at the door", .heavy)
struct EventIdConflictTests {
    @Test("the publisher refuses a claimed id with other content and answers an identical retry without a new record")
    func claimedIds() async throws {
        let redis = try TestRedis()
        let broker = try TestBroker()
        defer {
            broker.stop()
            redis.stop()
        }
        let prefix = TestBroker.uniqueName("conflict")
        let topics = HeraldTopics.prefixed(prefix)
        try await TopicProvisioner(topics: topics, bootstrapServers: broker.bootstrapServers).provision()
        let layout = SlotLayout(slotCount: 8, prefix: prefix)
        let pool = RedisConnectionPool(configuration: try RedisConfiguration(url: redis.url), size: 1)
        defer { pool.shutdown() }
        let publisher = KafkaNotificationPublisher(
            publisher: try EventPublisher(bootstrapServers: broker.bootstrapServers, topics: topics), pool: pool, layout: layout
        )
        let original = NotificationEvent(id: "dup-1", audience: .expression(.tag("Sports"), source: "Sports"), properties: ["msg": "first"])
        // The claim the planner wrote when it planned the original.
        let claim = EventClaim(partition: 0, offset: 7, fingerprint: EventClaim.fingerprint(of: original))
        _ = try await pool.withConnection { try await $0.send(.set(layout.eventClaimKey(eventId: "dup-1"), claim.description)) }

        var changed = original
        changed.properties["msg"] = "second"
        await #expect(throws: EventIdConflict.self) { _ = try await publisher.publish(changed, body: changed.canonicalJSON()) }

        var retry = original
        retry.publishedAt = Date()  // a retry is published later; the content is the same
        #expect(try await publisher.publish(retry, body: retry.canonicalJSON()) == "dup-1")

        // Neither wrote a record; a fresh id is published.
        let fresh = NotificationEvent(id: "new-1", audience: .broadcast, properties: [:])
        #expect(try await publisher.publish(fresh, body: fresh.canonicalJSON()) == "new-1")
        var tail = RecordTail(topic: topics.events, bootstrapServers: broker.bootstrapServers)
        tail.eventId = nil
        var ids: [String] = []
        for try await message in tail.records() {
            if let value = message.value, let event = try? NotificationEvent.decode(value) { ids.append(event.id ?? "-") }
        }
        #expect(ids == ["new-1"])
    }
}
