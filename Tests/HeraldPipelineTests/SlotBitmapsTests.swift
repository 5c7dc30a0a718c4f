import Foundation
import HeraldDomain
@testable import HeraldPipeline
import HeraldRedis
import HeraldRegistry
import HeraldTestSupport
import Testing

/// The `bits` plan and the planner's sample read a slot's bitmaps with one `MGET`, and size a
/// tag's set only where its bitmap is missing.
@Suite("Slot bitmaps")
struct SlotBitmapsTests {
    @Test func wordsPutPositionZeroInTheHighBitOfWordZero() {
        var generator = SeededGenerator(state: 7)
        for length in [0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65] {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            var expected = [UInt64](repeating: 0, count: (length + 7) / 8)
            for position in 0..<(length * 8) where bytes[position / 8] & (0x80 >> UInt8(position % 8)) != 0 {
                expected[position / 64] |= 1 << UInt64(63 - position % 64)
            }
            #expect(SlotBitmaps.words(bytes) == expected, "\(length) bytes")
        }
    }

    /// One slot's `MGET` reply: `live` first, then a bitmap per tag, a missing one reported.
    @Test func oneSlotsReplyNamesTheMissingBitmaps() throws {
        let bitmaps: [[UInt64]?] = [[1 << 63], nil, [3], nil]
        let (read, missing) = try SlotBitmaps.make(count: 4, tags: 3, slot: 9) { bitmaps[$0] }
        #expect(read.live == [1 << 63])
        #expect(read.tags == [[], [3], []])
        #expect(missing == [0, 2])
        #expect(!read.isEmpty)
        #expect(throws: RedisError.self) { try SlotBitmaps.make(count: 3, tags: 3, slot: 9) { bitmaps[$0] } }
    }

    /// Four slots: `common` on every registration (a bitmap everywhere), `rare` on two
    /// registrations of one slot (a set without a bitmap), `absent` on nobody, and one slot
    /// left empty.
    @Test func bitmapsAreReadWhereTheyExistAndSetsSizedOnlyWhereOneIsMissing() async throws {
        let redis = try TestRedis()
        defer { redis.stop() }
        let layout = SlotLayout(slotCount: 4, prefix: "bitmaps")
        let configuration = try RedisConfiguration(url: redis.url)
        let pool = RedisConnectionPool(configuration: configuration, size: 1)
        defer { pool.shutdown() }
        let index = RegistrationIndex(pool: pool, layout: layout)
        try await index.markBuilt()
        // Ids in slots 0-2 only; slot 3 stays empty.
        var ids: [String] = []
        var number = 0
        while ids.count < 3 * 100 {
            let id = "b\(number)"
            number += 1
            if layout.slot(of: id) != 3 { ids.append(id) }
        }
        let rareSlot = layout.slot(of: ids[0])
        let rare = Set(ids.filter { layout.slot(of: $0) == rareSlot }.prefix(2))
        _ = try await index.apply(
            ids.map { id in
                .registration(IndexedRegistration(testRegistration(id, tags: rare.contains(id) ? ["common", "rare"] : ["common"])))
            })
        let connection = RedisConnection(configuration: configuration, logger: PipelineHarness.logger)
        defer { connection.close() }

        func read(_ tags: [String]) async throws -> (bitmaps: [SlotBitmaps?], sizes: Int) {
            var read = SlotBitmapsRead(layout: layout, slots: Array(0..<4), tags: tags)
            let sizes = try read.received(await connection.pipeline(read.commands))
            return (try read.bitmaps(sizes: sizes.isEmpty ? [] : await connection.pipeline(sizes)), sizes.count)
        }
        let perSlot = (0..<4).map { slot in ids.filter { layout.slot(of: $0) == slot }.count }

        // A bitmap in every slot with registrations: no sizes asked, every one selected.
        let common = try await read(["common"])
        #expect(common.sizes == 0)
        for slot in 0..<4 {
            let bitmaps = try #require(common.bitmaps[slot])
            let selected = bitmaps.matching(TagMatcher(try TagExpression.parse("common"))).reduce(0) { $0 + $1.nonzeroBitCount }
            #expect(selected == perSlot[slot], "slot \(slot)")
            #expect(bitmaps.isEmpty == (slot == 3))
        }
        // No bitmap anywhere: sized in the three slots with registrations; only the rare tag's
        // slot needs another plan, the others select nobody.
        let rareRead = try await read(["common", "rare"])
        #expect(rareRead.sizes == 3)
        let matcher = TagMatcher(try TagExpression.parse("common && rare"))
        #expect(matcher.tags == ["common", "rare"])
        for slot in 0..<4 {
            if slot == rareSlot {
                #expect(rareRead.bitmaps[slot] == nil)
            } else {
                let bitmaps = try #require(rareRead.bitmaps[slot], "slot \(slot)")
                #expect(bitmaps.matching(matcher).allSatisfy { $0 == 0 })
            }
        }
        // A tag on nobody is an empty bitmap, not another plan.
        let absent = try await read(["absent"])
        #expect(absent.sizes == 3)
        #expect(absent.bitmaps.allSatisfy { $0 != nil })
    }
}
