import Foundation
import HeraldDomain
import HeraldRedis
import HeraldTestSupport
import Testing
@testable import HeraldRegistry

/// Registration writes wait while a breaking alert fans out (`AlertYield`), on a real Redis.
@Suite("Registration writes yield to breaking alerts", .heavy)
struct AlertYieldTests {
    /// A lane's signal that lasts `milliseconds` more (negative: one that ended).
    static func signal(_ key: String, lane: String = "worker-1/express-0", milliseconds: Int64) -> RedisCommand {
        RedisCommand("HSET", key, lane, String(Int64(Date().timeIntervalSince1970 * 1_000) + milliseconds))
    }

    @Test("no signal, or one that ended: no wait; a lasting one: the write waits, until it is gone or the limit; a zero limit never waits")
    func waitsWhileTheKeyIsSet() async throws {
        let redis = try TestRedis()
        let pool = RegistryFixtures.pool(redis)
        defer { pool.shutdown() }
        let key = RegistryFixtures.uniquePrefix() + ":breaking"

        let idle = AlertYield(pool: pool, key: key, limit: .seconds(60))
        _ = await idle.waitWhileBreaking()
        #expect(idle.writesThatWaited == 0)
        // A crashed worker's signal that has ended holds no one back.
        _ = try await pool.withConnection { try await $0.send(Self.signal(key, lane: "gone/express-0", milliseconds: -1_000)) }
        let afterCrash = AlertYield(pool: pool, key: key, limit: .seconds(60))
        _ = await afterCrash.waitWhileBreaking()
        #expect(afterCrash.writesThatWaited == 0)

        _ = try await pool.withConnection { try await $0.send(Self.signal(key, milliseconds: 600_000)) }
        // Held by the key for the whole limit, never less.
        let bounded = AlertYield(pool: pool, key: key, limit: .milliseconds(300))
        #expect(await bounded.waitWhileBreaking() >= .milliseconds(300))
        #expect(bounded.writesThatWaited == 1)
        // A zero limit turns the yield off.
        let off = AlertYield(pool: pool, key: key, limit: .zero)
        #expect(await off.waitWhileBreaking() == .zero)
        #expect(off.writesThatWaited == 0)

        // A write waiting with a long limit goes on once the key is gone.
        let patient = AlertYield(pool: pool, key: key, limit: .seconds(600))
        let waiting = Task { await patient.waitWhileBreaking() }
        try await waitWhileProgressing("the write to start waiting") { () async throws -> ProgressCheck<Int, Void> in
            patient.writesThatWaited == 1 ? .done(()) : .waiting(0)
        }
        _ = try await pool.withConnection { try await $0.send(RedisCommand("HDEL", key, "worker-1/express-0")) }
        #expect(await waiting.value < .seconds(600))
        #expect(patient.writesThatWaited == 1)
    }

    @Test("a registration write waits for a breaking alert before it reserves a version, then completes")
    func aWriteWaitsForTheAlert() async throws {
        let broker = try TestBroker()
        let redis = try TestRedis()
        var configuration = RegistryFixtures.configuration()
        configuration.alertYieldSeconds = 600
        let service = try await RegistryFixtures.service(broker: broker, redis: redis, configuration: configuration)
        let key = configuration.layout.breakingKey
        _ = try await service.index.pool.withConnection { try await $0.send(Self.signal(key, milliseconds: 600_000)) }

        let id = service.issueRegistrationId()
        let writing = Task { try await service.put(RegistryFixtures.registration(id, tags: ["World"], version: 0), expectedVersion: nil) }
        try await waitWhileProgressing("the write to wait for the alert") { () async throws -> ProgressCheck<Int, Void> in
            service.alertYield.writesThatWaited == 1 ? .done(()) : .waiting(0)
        }
        guard case .notFound = try await service.registration(id: id) else {
            Issue.record("the registration was written while a breaking alert was in flight")
            return
        }
        _ = try await service.index.pool.withConnection { try await $0.send(RedisCommand("HDEL", key, "worker-1/express-0")) }
        let written = try await writing.value
        guard case .found(let read) = try await service.registration(id: id) else {
            Issue.record("the write did not go on once the alert was over")
            return
        }
        #expect(read == written)
    }
}
