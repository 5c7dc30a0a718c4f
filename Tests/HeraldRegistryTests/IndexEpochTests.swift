import Foundation
import HeraldRedis
import HeraldTestSupport
import Testing

@testable import HeraldRegistry

/// The epoch and rebuild lease of `herald:meta` (`IndexEpoch`), against a real Redis.
@Suite("Index epoch and rebuild lease")
struct IndexEpochTests {
    @Test("no epoch until a rebuild finishes; one rebuilder at a time; a lapsed lease can be taken over")
    func leaseAndEpoch() async throws {
        let redis = try TestRedis()
        defer { redis.stop() }
        let index = RegistryFixtures.index(redis)
        try await index.checkMeta()
        #expect(try await index.epoch() == nil)
        let start = Date()
        #expect(try await index.takeRebuildLease(token: "a", lease: .seconds(30), now: start))
        #expect(try await !index.takeRebuildLease(token: "b", lease: .seconds(30), now: start))
        #expect(try await index.renewRebuildLease(token: "a", lease: .seconds(30), now: start))
        #expect(try await !index.renewRebuildLease(token: "b", lease: .seconds(30), now: start))
        // Past a's deadline, b may take over, and a can neither renew nor finish.
        let later = start.addingTimeInterval(31)
        #expect(try await index.takeRebuildLease(token: "b", lease: .seconds(30), now: later))
        #expect(try await !index.renewRebuildLease(token: "a", lease: .seconds(30), now: later))
        await #expect(throws: IndexNotReady.self) { try await index.finishRebuild(token: "a") }
        #expect(try await index.epoch() == nil)
        let epoch = try await index.finishRebuild(token: "b")
        #expect(try await index.epoch() == epoch)

        // Rebuilding a whole index keeps its epoch, so readers in the middle of a task go on.
        #expect(try await index.takeRebuildLease(token: "c", lease: .seconds(30)))
        #expect(try await index.finishRebuild(token: "c") == epoch)
    }

    @Test("a rebuild whose Redis was emptied under it cannot mark the index whole")
    func flushDuringRebuild() async throws {
        let redis = try TestRedis()
        defer { redis.stop() }
        let index = RegistryFixtures.index(redis)
        try await index.checkMeta()
        #expect(try await index.takeRebuildLease(token: "a", lease: .seconds(30)))
        // FLUSHALL of this index's keys (the Redis may be shared: HERALD_TEST_REDIS_URL).
        _ = try await index.pool.withConnection { try await $0.deleteKeys(matching: index.layout.prefix + ":*") }
        #expect(try await !index.renewRebuildLease(token: "a", lease: .seconds(30)))
        await #expect(throws: IndexNotReady.self) { try await index.finishRebuild(token: "a") }
        #expect(try await index.epoch() == nil)
    }

    @Test("readers: no epoch, or another epoch after the read, is IndexNotReady naming the meta key")
    func readerChecks() throws {
        let layout = SlotLayout(slotCount: 4, prefix: "p")
        #expect(throws: IndexNotReady.self) { try IndexEpoch.require(.null, layout: layout) }
        do {
            _ = try IndexEpoch.require(.null, layout: layout)
        } catch let error as IndexNotReady {
            #expect(error.message.contains("p:meta"))
        }
        #expect(try IndexEpoch.require(.bulkString(Array("e1".utf8)), layout: layout) == "e1")
        #expect(throws: IndexNotReady.self) {
            try IndexEpoch.verify(.bulkString(Array("e2".utf8)), unchanged: "e1", layout: layout)
        }
        try IndexEpoch.verify(.bulkString(Array("e1".utf8)), unchanged: "e1", layout: layout)
    }
}
