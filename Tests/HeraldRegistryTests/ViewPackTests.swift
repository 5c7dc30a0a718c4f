import Foundation
import HeraldDomain
import HeraldRedis
import HeraldTestSupport
import Testing
@testable import HeraldRegistry

@Suite("View packs")
struct ViewPackTests {
    @Test("entries read back in place, in order, and each id finds its own view")
    func entriesReadBack() {
        let entries = [(id: "b", view: "1|apns||t|k|h1"), (id: "a", view: ""), (id: "ab", view: "1|fcm||||x|y")]
        let pack = ViewPack.encode(entries)
        #expect(pack.count == entries.reduce(0) { $0 + 8 + $1.id.utf8.count + $1.view.utf8.count })
        var seen: [String] = []
        let whole = pack.withUnsafeBytes { bytes in
            ViewPack.forEachEntry(in: bytes) { id, view in
                seen.append(String(decoding: id, as: UTF8.self) + "=" + String(decoding: view, as: UTF8.self))
            }
        }
        #expect(whole)
        #expect(seen == ["b=1|apns||t|k|h1", "a=", "ab=1|fcm||||x|y"])
        #expect(ViewPack.view(of: "a", inPack: pack) == [])
        #expect(ViewPack.view(of: "ab", inPack: pack).map { String(decoding: $0, as: UTF8.self) } == "1|fcm||||x|y")
        #expect(ViewPack.view(of: "c", inPack: pack) == nil)
        #expect(ViewPack.view(of: "", inPack: pack) == nil)
        #expect(ViewPack.entries(pack)?.map(\.id) == ["a", "ab", "b"])
    }

    @Test("a pack cut anywhere inside an entry is malformed; the whole entries before the cut still read")
    func truncatedPacks() {
        let pack = ViewPack.encode([(id: "r1", view: "1|apns||||aa"), (id: "r2", view: "1|apns||||bb")])
        let firstLength = 8 + 2 + 12
        for cut in 1..<pack.count where cut != firstLength {
            let part = Array(pack.prefix(cut))
            var ids: [String] = []
            let whole = part.withUnsafeBytes { bytes in
                ViewPack.forEachEntry(in: bytes) { id, _ in ids.append(String(decoding: id, as: UTF8.self)) }
            }
            #expect(!whole, "cut at \(cut)")
            #expect(ids == (cut > firstLength ? ["r1"] : []), "cut at \(cut)")
            #expect(ViewPack.entries(part) == nil)
            #expect(ViewPack.view(of: "r2", inPack: part) == nil)
        }
    }

    @Test("ids spread over every pack of a slot")
    func packsSpread() {
        var counts = [Int](repeating: 0, count: SlotLayout.packsPerSlot)
        for index in 0..<51_200 { counts[SlotLayout.pack(of: "\(UInt64(index) &* 0x9E37_79B9_7F4A_7C15)")] += 1 }
        // 200 per pack on average.
        #expect(counts.min()! >= 130)
        #expect(counts.max()! <= 270)
        #expect(SlotLayout.pack(of: "") == 5_381 % 256)
        #expect(SlotLayout.pack(of: "a") == (5_381 * 33 + 97) % 256)
    }

    /// The scripts keep the packs themselves: every live registration once, in the pack Swift
    /// computes for it, with the view of its newest change; no empty pack fields.
    @Test("apply, change, delete and expiry keep each view in its pack exactly once")
    func scriptsKeepPacks() async throws {
        let redis = try TestRedis()
        defer { redis.stop() }
        let index = RegistryFixtures.index(redis, slots: 1)
        let now = Date()
        var expected: [String: String] = [:]
        func check(_ step: String) async throws {
            let actual = try await packContents(index)
            #expect(actual.misplaced.count == 0, "\(step): entries outside their pack: \(actual.misplaced.prefix(3))")
            #expect(actual.emptyFields == 0, "\(step)")
            #expect(actual.duplicates.count == 0, "\(step): \(actual.duplicates.prefix(3))")
            #expect(actual.views == expected, "\(step)")
        }
        // 700 registrations in one slot: about 3 per pack, so packs hold several entries.
        var changes: [RegistryChange] = []
        for number in 0..<700 {
            let id = "reg-\(number)"
            let expiresAt = number % 10 == 0 ? now.addingTimeInterval(60) : nil
            let indexed = IndexedRegistration(
                RegistryFixtures.registration(
                    id, tags: ["t\(number % 3)"], handle: RegistryFixtures.token(number), expiresAt: expiresAt, version: 1
                ))
            changes.append(.registration(indexed))
            expected[id] = indexed.view.encoded
        }
        #expect(try await index.apply(changes, now: now).allSatisfy { $0 })
        try await check("after 700 registrations")

        changes = []
        for number in stride(from: 1, to: 700, by: 7) {
            let id = "reg-\(number)"
            let indexed = IndexedRegistration(
                RegistryFixtures.registration(
                    id, tags: ["t0"], handle: RegistryFixtures.token(10_000 + number), version: 2
                ))
            changes.append(.registration(indexed))
            expected[id] = indexed.view.encoded
        }
        for number in stride(from: 2, to: 700, by: 5) where number % 7 != 1 {
            changes.append(.registrationDeleted(id: "reg-\(number)", version: 2))
            expected["reg-\(number)"] = nil
        }
        #expect(try await index.apply(changes, now: now).allSatisfy { $0 })
        try await check("after changes and deletes")

        // Only the expiring registrations that were neither changed (no expiry since) nor deleted.
        let expiring = (0..<700).filter { $0 % 10 == 0 && $0 % 7 != 1 && $0 % 5 != 2 }
        let swept = try await index.sweepExpired(now: now.addingTimeInterval(120))
        #expect(swept == expiring.count)
        for number in expiring { expected["reg-\(number)"] = nil }
        try await check("after the sweep")

        for number in 0..<700 where expected["reg-\(number)"] != nil {
            #expect(try await index.apply(.registrationDeleted(id: "reg-\(number)", version: 3)))
        }
        expected = [:]
        try await check("after deleting everything")
        let packs = try await index.pool.withConnection { try await $0.send(.exists(index.layout.packsKey(slot: 0))) }
        #expect(packs.int == 0)
    }

    private struct PackContents {
        var views: [String: String] = [:]
        var misplaced: [String] = []
        var duplicates: [String] = []
        var emptyFields = 0
    }

    private func packContents(_ index: RegistrationIndex) async throws -> PackContents {
        let reply = try await index.pool.withConnection { try await $0.send(.hgetall(index.layout.packsKey(slot: 0))) }
        var contents = PackContents()
        let flat = reply.array ?? []
        for pair in stride(from: 0, to: flat.count - 1, by: 2) {
            let field = flat[pair].string ?? "?"
            let pack = flat[pair + 1].bytes ?? []
            if pack.isEmpty { contents.emptyFields += 1 }
            guard let entries = ViewPack.entries(pack) else {
                contents.misplaced.append("malformed pack \(field)")
                continue
            }
            for entry in entries {
                if SlotLayout.packField(SlotLayout.pack(of: entry.id)) != field { contents.misplaced.append(entry.id) }
                if contents.views.updateValue(entry.view, forKey: entry.id) != nil { contents.duplicates.append(entry.id) }
            }
        }
        return contents
    }
}
