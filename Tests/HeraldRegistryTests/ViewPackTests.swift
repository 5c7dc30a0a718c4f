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
        let entries = [
            (position: 17, id: "b", view: "1|apns||t|k|h1"), (position: 16, id: "a", view: ""),
            (position: 31, id: "ab", view: "1|fcm||||x|y"),
        ]
        let pack = ViewPack.encode(entries)
        #expect(pack.count == entries.reduce(0) { $0 + 12 + $1.id.utf8.count + $1.view.utf8.count })
        var seen: [String] = []
        let whole = pack.withUnsafeBytes { bytes in
            ViewPack.forEachEntry(in: bytes) { position, id, view in
                seen.append("\(position):" + String(decoding: id, as: UTF8.self) + "=" + String(decoding: view, as: UTF8.self))
            }
        }
        #expect(whole)
        #expect(seen == ["17:b=1|apns||t|k|h1", "16:a=", "31:ab=1|fcm||||x|y"])
        #expect(ViewPack.view(of: "a", inPack: pack) == [])
        #expect(ViewPack.view(of: "ab", inPack: pack).map { String(decoding: $0, as: UTF8.self) } == "1|fcm||||x|y")
        #expect(ViewPack.view(of: "c", inPack: pack) == nil)
        #expect(ViewPack.view(of: "", inPack: pack) == nil)
        #expect(ViewPack.entries(pack)?.map(\.id) == ["a", "ab", "b"])
    }

    @Test("a pack cut anywhere inside an entry is malformed; the whole entries before the cut still read")
    func truncatedPacks() {
        let pack = ViewPack.encode([(position: 0, id: "r1", view: "1|apns||||aa"), (position: 1, id: "r2", view: "1|apns||||bb")])
        let firstLength = 12 + 2 + 12
        for cut in 1..<pack.count where cut != firstLength {
            let part = Array(pack.prefix(cut))
            var ids: [String] = []
            let whole = part.withUnsafeBytes { bytes in
                ViewPack.forEachEntry(in: bytes) { _, id, _ in ids.append(String(decoding: id, as: UTF8.self)) }
            }
            #expect(!whole, "cut at \(cut)")
            #expect(ids == (cut > firstLength ? ["r1"] : []), "cut at \(cut)")
            #expect(ViewPack.entries(part) == nil)
            #expect(ViewPack.view(of: "r2", inPack: part) == nil)
        }
    }

    @Test("positions map to packs of 16, and bitmaps read as words with position 0 in the high bit")
    func positionsAndPacks() {
        #expect(SlotLayout.pack(ofPosition: 0) == 0)
        #expect(SlotLayout.pack(ofPosition: 15) == 0)
        #expect(SlotLayout.pack(ofPosition: 16) == 1)
        #expect(SlotLayout.packField(SlotLayout.pack(ofPosition: 70_000)) == "4375")
        #expect(PositionCheck.positions(in: [0x80, 0x01, 0x00, 0x40]) == [0, 15, 25])
    }

    /// The scripts keep the packs themselves: every live registration once, in the pack of its
    /// position, with the view of its newest change; no empty pack fields. And the positions
    /// (`pos`, `live`, the packs' groups, open positions and spare packs) and tag bitmaps stay
    /// consistent with the sets (`PositionCheck`, run by the digest), registrations with the
    /// same common tags share packs, freed positions are taken again before new ones, and a
    /// tag's bitmap appears when its set reaches the threshold and goes once it falls below half.
    @Test("apply, change, delete and expiry keep each view in the pack of its position, and positions and bitmaps consistent")
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
            let problems = try await index.digest().keys.keys.filter { $0.contains("!") }
            #expect(problems.isEmpty, "\(step): \(problems.sorted().prefix(3))")
        }
        func bitmapExists(_ tag: String) async throws -> Bool {
            try await index.pool.withConnection { try await $0.send(.exists(index.layout.bitmapKey(slot: 0, tag: tag))) }.int == 1
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
        #expect(try await bitmapExists("t0"))
        // Until each tag had a bitmap (t0 on its 32nd registration, reg-93; t2 on reg-95) all
        // arrived in the mixed group, positions 0..<96 in order; after that each tag's
        // registrations fill packs of their own.
        let positions = try await index.pool.withConnection {
            try await $0.send(.hmget(index.layout.positionsKey(slot: 0), ["reg-0", "reg-95"]))
        }
        #expect(positions.array?.map(\.string) == ["0", "95"])
        let tagOf = { (id: String) in Int(id.dropFirst(4)).map { "t\($0 % 3)" } ?? "?" }
        let grouped = try await packGroups(index)
        let groupedPacks = grouped.values.filter { $0 != SlotLayout.mixedGroup }.count
        #expect(groupedPacks >= 3)
        for (pack, ids) in try await packIds(index) where grouped[pack] != SlotLayout.mixedGroup {
            let tags: Set<String> = Set(ids.map(tagOf))
            #expect(tags.count == 1, "pack \(pack) mixes tags: \(ids.prefix(4))")
        }
        // 700 registrations: the 6 mixed packs, and three groups with at most one pack each partly filled.
        let packCount = grouped.count
        let mostPacks = 6 + (700 - 96) / 16 + 3
        #expect(packCount <= mostPacks)

        // A tag that grows past the threshold gets a bitmap at that moment.
        for number in 0..<(SlotLayout.bitmapThreshold + 8) {
            let id = "rare-\(number)"
            let indexed = IndexedRegistration(
                RegistryFixtures.registration(
                    id, tags: ["t\(number % 3)", "rare"], handle: RegistryFixtures.token(50_000 + number), version: 1))
            #expect(try await index.apply(.registration(indexed), now: now))
            expected[id] = indexed.view.encoded
            #expect(try await bitmapExists("rare") == (number + 1 >= SlotLayout.bitmapThreshold), "rare on \(number + 1)")
        }
        try await check("after a tag grew past the threshold")

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
        for number in 0..<30 {
            changes.append(.registrationDeleted(id: "rare-\(number)", version: 2))
            expected["rare-\(number)"] = nil
        }
        #expect(try await index.apply(changes, now: now).allSatisfy { $0 })
        try await check("after changes and deletes")
        // Freed positions are taken again first: a new registration with tag t1 gets the lowest
        // open position of t1's group (reg-103's).
        let t1Position = try await position(index, "reg-103")
        let t1Group = try #require(try await packGroups(index)[SlotLayout.pack(ofPosition: t1Position)])
        let openKey = index.layout.openPositionsKey(slot: 0, group: t1Group)
        let lowest = try await index.pool.withConnection { try await $0.send(RedisCommand("ZRANGE", openKey, "0", "0")) }
        let freed = try #require(lowest.array?.first?.string.flatMap { Int($0) })
        let newcomer = IndexedRegistration(
            RegistryFixtures.registration("reg-new", tags: ["t1"], handle: RegistryFixtures.token(99_999), version: 1))
        #expect(try await index.apply(.registration(newcomer), now: now))
        expected["reg-new"] = newcomer.view.encoded
        #expect(try await position(index, "reg-new") == freed)
        try await check("after a registration took a freed position")

        // Only the expiring registrations that were neither changed (no expiry since) nor deleted.
        let expiring = (0..<700).filter { $0 % 10 == 0 && $0 % 7 != 1 && $0 % 5 != 2 }
        let swept = try await index.sweepExpired(now: now.addingTimeInterval(120))
        #expect(swept == expiring.count)
        for number in expiring { expected["reg-\(number)"] = nil }
        try await check("after the sweep")

        // The rare tag, now on fewer than half the threshold, has lost its bitmap.
        #expect(try await !bitmapExists("rare"))
        for number in 0..<700 where expected["reg-\(number)"] != nil {
            #expect(try await index.apply(.registrationDeleted(id: "reg-\(number)", version: 3_000)))
        }
        #expect(try await index.apply(.registrationDeleted(id: "reg-new", version: 3_000)))
        for number in 30..<(SlotLayout.bitmapThreshold + 8) {
            #expect(try await index.apply(.registrationDeleted(id: "rare-\(number)", version: 3_000)))
        }
        expected = [:]
        try await check("after deleting everything")
        for key in [
            index.layout.liveKey(slot: 0), index.layout.sparePacksKey(slot: 0), index.layout.packGroupsKey(slot: 0),
            index.layout.groupsKey(slot: 0), index.layout.bitmapKey(slot: 0, tag: "t0"),
        ] {
            #expect(try await index.pool.withConnection { try await $0.send(.exists(key)) }.int == 0, "\(key)")
        }
        let openKeys = try await index.pool.withConnection { try await $0.keys(matching: index.layout.slotPrefix(0) + "open:*") }
        #expect(openKeys.isEmpty)
        let packs = try await index.pool.withConnection { try await $0.send(.exists(index.layout.packsKey(slot: 0))) }
        #expect(packs.int == 0)
    }

    /// A slot with more distinct groups than it may have: the late ones go to the mixed group,
    /// and the positions stay consistent.
    @Test("a slot holds a bounded number of groups; the rest share the mixed group")
    func groupsBounded() async throws {
        let redis = try TestRedis()
        defer { redis.stop() }
        let index = RegistryFixtures.index(redis, slots: 1)
        let now = Date()
        // Seven tags with bitmaps, then one registration for each of their 127 combinations:
        // more groups than the slot may have.
        let tagCount = 7
        #expect((1 << tagCount) - 1 > SlotLayout.groupsMinimum)
        var changes: [RegistryChange] = []
        for number in 0..<(tagCount * SlotLayout.bitmapThreshold) {
            changes.append(
                .registration(
                    IndexedRegistration(
                        RegistryFixtures.registration(
                            "base-\(number)", tags: ["c\(number % tagCount)"], handle: RegistryFixtures.token(number), version: 1))))
        }
        for combination in 1..<(1 << tagCount) {
            let tags = (0..<tagCount).filter { combination & (1 << $0) != 0 }.map { "c\($0)" }
            changes.append(
                .registration(
                    IndexedRegistration(
                        RegistryFixtures.registration(
                            "combo-\(combination)", tags: tags, handle: RegistryFixtures.token(1_000 + combination), version: 1))))
        }
        #expect(try await index.apply(changes, now: now).allSatisfy { $0 })
        let groups = try await index.pool.withConnection { try await $0.send(.hgetall(index.layout.groupsKey(slot: 0))) }
        let count = (groups.array?.count ?? 0) / 2
        #expect(count == SlotLayout.groupsMinimum, "groups: \(count)")
        let grouped = try await packGroups(index)
        let last = try await position(index, "combo-\((1 << tagCount) - 1)")
        #expect(grouped[SlotLayout.pack(ofPosition: last)] == SlotLayout.mixedGroup)
        let problems = try await index.digest().keys.keys.filter { $0.contains("!") }
        #expect(problems.isEmpty, "\(problems.sorted().prefix(3))")
    }

    private func position(_ index: RegistrationIndex, _ id: String) async throws -> Int {
        let reply = try await index.pool.withConnection { try await $0.send(.hmget(index.layout.positionsKey(slot: 0), [id])) }
        return try #require(reply.array?.first?.string.flatMap { Int($0) })
    }

    /// Pack -> group, from the slot's `packgroup` hash.
    private func packGroups(_ index: RegistrationIndex) async throws -> [Int: String] {
        let reply = try await index.pool.withConnection { try await $0.send(.hgetall(index.layout.packGroupsKey(slot: 0))) }
        let flat = reply.array ?? []
        var map: [Int: String] = [:]
        for pair in stride(from: 0, to: flat.count - 1, by: 2) { map[Int(flat[pair].string ?? "") ?? -1] = flat[pair + 1].string }
        return map
    }

    /// Pack -> the ids of its entries.
    private func packIds(_ index: RegistrationIndex) async throws -> [Int: [String]] {
        let reply = try await index.pool.withConnection { try await $0.send(.hgetall(index.layout.packsKey(slot: 0))) }
        let flat = reply.array ?? []
        var map: [Int: [String]] = [:]
        for pair in stride(from: 0, to: flat.count - 1, by: 2) {
            map[Int(flat[pair].string ?? "") ?? -1] = (ViewPack.entries(flat[pair + 1].bytes ?? []) ?? []).map(\.id)
        }
        return map
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
                if SlotLayout.packField(SlotLayout.pack(ofPosition: entry.position)) != field { contents.misplaced.append(entry.id) }
                if contents.views.updateValue(entry.view, forKey: entry.id) != nil { contents.duplicates.append(entry.id) }
            }
        }
        return contents
    }
}

extension ViewPack {
    /// The view of `id` in `pack`, copied out; nil when the pack has no entry for it.
    fileprivate static func view(of id: String, inPack pack: [UInt8]) -> [UInt8]? {
        var id = id
        return id.withUTF8 { idBytes in
            pack.withUnsafeBytes { packBytes in view(of: UnsafeRawBufferPointer(idBytes), in: packBytes).map { Array($0) } }
        }
    }
}

/// The keys of a slot's groups, which only the Lua scripts write (`RegistryScripts.slotFunctions`,
/// docs/redis-layout.md).
extension SlotLayout {
    fileprivate func packGroupsKey(slot: Int) -> String { slotPrefix(slot) + "packgroup" }
    fileprivate func groupsKey(slot: Int) -> String { slotPrefix(slot) + "groups" }
    fileprivate func openPositionsKey(slot: Int, group: String) -> String { slotPrefix(slot) + "open:" + group }
    fileprivate func sparePacksKey(slot: Int) -> String { slotPrefix(slot) + "spare" }
}
