import Foundation
import HeraldDomain
import HeraldKafka
import HeraldRedis
import HeraldTestSupport
@testable import HeraldRegistry

/// Servers and objects shared by the registry tests. Each test builds its own, with unique
/// topic names, so tests run in parallel without seeing each other.
enum RegistryFixtures {
    static func pool(_ redis: TestRedis) -> RedisConnectionPool {
        RedisConnectionPool(configuration: try! RedisConfiguration(url: redis.url), size: 4)
    }

    /// A key prefix no other test uses, so tests can share one Redis (HERALD_TEST_REDIS_URL).
    static func uniquePrefix() -> String { TestBroker.uniqueName("herald-test") }

    static func index(_ redis: TestRedis, slots: Int = 16, prefix: String = uniquePrefix()) -> RegistrationIndex {
        RegistrationIndex(pool: pool(redis), layout: SlotLayout(slotCount: slots, prefix: prefix))
    }

    static func configuration(slots: Int = 16) -> RegistryConfiguration {
        var configuration = RegistryConfiguration()
        configuration.registrationsTopic = TestBroker.uniqueName("herald.registrations")
        configuration.topicPartitions = 3
        configuration.slotCount = slots
        configuration.redisPrefix = uniquePrefix()
        configuration.registrationIdSecret = "test-secret"
        configuration.indexerGroup = TestBroker.uniqueName("indexer")
        configuration.sweepInterval = 0.2
        return configuration
    }

    static func consumerConfiguration(_ broker: TestBroker) -> KafkaConsumerConfiguration {
        var configuration = KafkaConsumerConfiguration(bootstrapServers: broker.bootstrapServers)
        // Tansu delays a group join by about half the session timeout.
        configuration.sessionTimeoutMs = TestBroker.sessionTimeoutMs
        configuration.heartbeatIntervalMs = 500
        return configuration
    }

    /// A service writing to a fresh topic on `broker` and indexing into `redis`.
    static func service(broker: TestBroker, redis: TestRedis, configuration: RegistryConfiguration) async throws -> RegistrationService {
        let admin = try KafkaAdmin(configuration: KafkaAdminConfiguration(bootstrapServers: broker.bootstrapServers))
        try await RegistrationLog.createTopic(admin: admin, configuration: configuration)
        let producer = try KafkaProducer(configuration: RegistrationLog.producerConfiguration(bootstrapServers: broker.bootstrapServers))
        let log = RegistrationLog(producer: producer, topic: configuration.registrationsTopic)
        let index = RegistrationIndex(pool: pool(redis), layout: configuration.layout)
        try await index.markBuilt()
        return RegistrationService(configuration: configuration, log: log, index: index, admin: admin)
    }

    static let newsTemplate = RegistrationTemplate(
        name: "newsTemplate",
        body: #"{"aps":{"alert":"$(News_French)"}}"#,
        headers: ["apns-push-type": "alert"]
    )

    /// A well-formed APNs device token (64 hex digits) that differs per `seed`.
    static func token(_ seed: Int) -> String {
        let hex = String(seed, radix: 16)
        return String(repeating: "a", count: 64 - hex.count) + hex
    }

    static func registration(
        _ id: String, tags: [String], handle: String = token(0), template: RegistrationTemplate? = newsTemplate,
        expiresAt: Date? = nil, version: Int64 = 1
    ) -> Registration {
        Registration(
            registrationId: id, platform: .apns, handle: handle, tags: tags,
            template: template, expiresAt: expiresAt, version: version
        )
    }

    /// Waits until `condition` holds, checking every 50 ms, failing after `seconds` (generous: it
    /// only ends a test that would otherwise hang).
    static func eventually(
        _ what: String, seconds: Double = 120, _ condition: () async throws -> Bool
    ) async throws {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try await condition() { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw FixtureTimeout(message: "timed out after \(seconds) s waiting for \(what)")
    }
}

struct FixtureTimeout: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

extension RegistrationIndex {
    /// Members of one set of one id's slot, sorted (test reads).
    func setMembers(_ key: String) async throws -> [String] {
        let reply = try await pool.withConnection { try await $0.send(.smembers(key)) }
        return (reply.array ?? []).compactMap(\.string).sorted()
    }

    /// Ids carrying `tag` in any slot, sorted.
    func idsWithTag(_ tag: String) async throws -> [String] {
        var ids: [String] = []
        for slot in 0..<layout.slotCount { ids += try await setMembers(layout.tagKey(slot: slot, tag: tag)) }
        return ids.sorted()
    }

    /// Empties Redis: FLUSHALL on a private server; on a shared one (HERALD_TEST_REDIS_URL),
    /// deletes every key under this index's prefix, which is the same for this index.
    func wipe(private isPrivate: Bool) async throws {
        if isPrivate {
            _ = try await pool.withConnection { try await $0.send(.flushall) }
            return
        }
        _ = try await pool.withConnection { try await $0.deleteKeys(matching: layout.prefix + ":*") }
    }
}
