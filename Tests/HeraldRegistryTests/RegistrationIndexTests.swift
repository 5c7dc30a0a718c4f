import Foundation
import HeraldDomain
import HeraldRedis
import HeraldTestSupport
import Testing
@testable import HeraldRegistry

@Suite("Registration index on a real Redis")
struct RegistrationIndexTests {
    @Test("register, change tags, delete: tag, handle and all sets follow exactly")
    func tagSetsFollowChanges() async throws {
        let redis = try TestRedis()
        let index = RegistryFixtures.index(redis)
        let layout = index.layout
        let slot = layout.slot(of: "r1")

        #expect(
            try await index.apply(
                .registration(
                    IndexedRegistration(
                        RegistryFixtures.registration("r1", tags: ["World", "Science"], handle: "h1", version: 1)
                    ))))
        #expect(try await index.idsWithTag("World") == ["r1"])
        #expect(try await index.idsWithTag("Science") == ["r1"])
        #expect(try await index.setMembers(layout.allKey(slot: slot)) == ["r1"])
        #expect(try await index.setMembers(layout.handleKey(slot: slot, handle: "h1")) == ["r1"])

        #expect(
            try await index.apply(
                .registration(
                    IndexedRegistration(
                        RegistryFixtures.registration("r1", tags: ["World", "Sports"], handle: "h2", version: 2)
                    ))))
        #expect(try await index.idsWithTag("World") == ["r1"])
        #expect(try await index.idsWithTag("Science") == [])
        #expect(try await index.idsWithTag("Sports") == ["r1"])
        #expect(try await index.setMembers(layout.handleKey(slot: slot, handle: "h1")) == [])
        #expect(try await index.setMembers(layout.handleKey(slot: slot, handle: "h2")) == ["r1"])

        #expect(try await index.apply(.registrationDeleted(id: "r1", version: 3)))
        #expect(try await index.idsWithTag("World") == [])
        #expect(try await index.idsWithTag("Sports") == [])
        #expect(try await index.setMembers(layout.allKey(slot: slot)) == [])
        #expect(try await index.setMembers(layout.handleKey(slot: slot, handle: "h2")) == [])
        #expect(try await index.setMembers(layout.goneKey(slot: slot)) == ["r1"])
        guard case .gone = try await index.storedRegistration(id: "r1") else {
            Issue.record("a deleted registration must read as gone")
            return
        }
    }

    @Test("quiet hours and a device's own cap become $QuietHours and $FrequencyCap tags; a change or a delete takes the old ones away")
    func quietHoursTagsFollowChanges() async throws {
        let redis = try TestRedis()
        let index = RegistryFixtures.index(redis)
        func quiet(_ hours: String?, version: Int64) -> IndexedRegistration {
            var registration = RegistryFixtures.registration("r1", tags: ["World"], handle: "h1", version: version)
            registration.quietHours = hours
            registration.timeZone = "Europe/Paris"
            return IndexedRegistration(registration)
        }
        #expect(try await index.apply(.registration(quiet("22:00-07:00", version: 1))))
        #expect(try await index.idsWithTag("$QuietHours:{22:00-07:00}") == ["r1"])
        #expect(try await index.idsWithTag(QuietHours.anyTag) == ["r1"])
        #expect(try await index.apply(.registration(quiet("23:00-06:00", version: 2))))
        #expect(try await index.idsWithTag("$QuietHours:{22:00-07:00}") == [])
        #expect(try await index.idsWithTag("$QuietHours:{23:00-06:00}") == ["r1"])
        #expect(try await index.apply(.registration(quiet(nil, version: 3))))
        #expect(try await index.idsWithTag("$QuietHours:{23:00-06:00}") == [])
        #expect(try await index.idsWithTag(QuietHours.anyTag) == [])
        #expect(try await index.idsWithTag("$TimeZone:{Europe/Paris}") == ["r1"])
        var capped = RegistryFixtures.registration("r1", tags: ["World"], handle: "h1", version: 4)
        capped.quietHours = "22:00-07:00"
        capped.frequencyCap = 3
        #expect(try await index.apply(.registration(IndexedRegistration(capped))))
        #expect(try await index.idsWithTag(FrequencyCap.tag(3)) == ["r1"])
        #expect(try await index.idsWithTag(FrequencyCap.anyTag) == ["r1"])
        capped.frequencyCap = 5
        capped.version = 5
        #expect(try await index.apply(.registration(IndexedRegistration(capped))))
        #expect(try await index.idsWithTag(FrequencyCap.tag(3)) == [])
        #expect(try await index.idsWithTag(FrequencyCap.tag(5)) == ["r1"])
        #expect(try await index.apply(.registrationDeleted(id: "r1", version: 6)))
        #expect(try await index.idsWithTag(FrequencyCap.tag(5)) == [])
        #expect(try await index.idsWithTag(FrequencyCap.anyTag) == [])
        #expect(try await index.idsWithTag("$QuietHours:{22:00-07:00}") == [])
        #expect(try await index.idsWithTag(QuietHours.anyTag) == [])
    }

    @Test("live registrations are counted over every slot, all of a hub's and one handle's")
    func counts() async throws {
        let redis = try TestRedis()
        let index = RegistryFixtures.index(redis)
        for number in 0..<40 {
            let registration = RegistryFixtures.registration(
                "c\(number)", tags: ["World"], handle: number < 7 ? "shared" : "h\(number)", version: 1)
            #expect(try await index.apply(.registration(IndexedRegistration(registration))))
        }
        #expect(try await index.liveCount() == 40)
        #expect(try await index.count(handle: "shared") == 7)
        #expect(try await index.count(handle: "nobody") == 0)
        #expect(try await index.apply(.registrationDeleted(id: "c3", version: 2)))
        #expect(try await index.liveCount() == 39)
        #expect(try await index.count(handle: "shared") == 6)
        #expect(try await index.hub(HubName("sports")!).liveCount() == 0)
    }

    @Test("a hub's templates are admitted up to its limit, in one script; known ones always pass")
    func templateLedger() async throws {
        let redis = try TestRedis()
        let sports = RegistryFixtures.index(redis).hub(HubName("sports")!)
        #expect(try await sports.admitTemplates(keys: ["a", "b", "a"], limit: 3) == (true, 0))
        #expect(try await sports.admitTemplates(keys: ["c", "d"], limit: 3) == (false, 2))
        #expect(try await sports.admitTemplates(keys: ["b", "c"], limit: 3) == (true, 2))
        #expect(try await sports.admitTemplates(keys: ["a", "b", "c"], limit: 3) == (true, 3))
        #expect(try await sports.admitTemplates(keys: ["d"], limit: 3) == (false, 3))
        // Another hub has a ledger of its own.
        #expect(try await RegistryFixtures.index(redis).admitTemplates(keys: ["d"], limit: 1) == (true, 0))
    }

    @Test("a replayed or older change is ignored and changes nothing")
    func olderChangeIgnored() async throws {
        let redis = try TestRedis()
        let index = RegistryFixtures.index(redis)
        let v1 = RegistryChange.registration(IndexedRegistration(RegistryFixtures.registration("r1", tags: ["Old"], version: 10)))
        let v2 = RegistryChange.registration(IndexedRegistration(RegistryFixtures.registration("r1", tags: ["New"], version: 20)))
        try await index.apply(v1)
        try await index.apply(v2)
        let before = try await index.digest()
        #expect(try await index.apply(v1) == false)
        #expect(try await index.apply(v2) == false)
        #expect(try await index.apply(.registrationDeleted(id: "r1", version: 15)) == false)
        #expect(try await index.digest() == before)
        #expect(try await index.idsWithTag("New") == ["r1"])
        #expect(try await index.idsWithTag("Old") == [])
    }

    @Test("expired registrations are not indexed, stop matching, and are swept")
    func expiry() async throws {
        let redis = try TestRedis()
        let index = RegistryFixtures.index(redis)
        let now = Date()
        try await index.apply(
            .registration(
                IndexedRegistration(
                    RegistryFixtures.registration(
                        "past", tags: ["World"], expiresAt: now.addingTimeInterval(-60)
                    ))))
        #expect(try await index.idsWithTag("World") == [])
        guard case .absent = try await index.storedRegistration(id: "past") else {
            Issue.record("an already expired registration must not be stored")
            return
        }

        try await index.apply(
            .registration(
                IndexedRegistration(
                    RegistryFixtures.registration(
                        "soon", tags: ["World"], expiresAt: now.addingTimeInterval(120)
                    ))))
        try await index.apply(
            .registration(
                IndexedRegistration(
                    RegistryFixtures.registration(
                        "forever", tags: ["World"]
                    ))))
        #expect(try await index.idsWithTag("World") == ["forever", "soon"])
        let later = now.addingTimeInterval(180)
        guard case .absent = try await index.storedRegistration(id: "soon", now: later) else {
            Issue.record("an expired registration must read as absent before the sweep")
            return
        }
        #expect(try await index.sweepExpired(now: now) == 0)
        #expect(try await index.sweepExpired(now: later, batchPerSlot: 1) == 1)
        #expect(try await index.idsWithTag("World") == ["forever"])
        let slot = index.layout.slot(of: "soon")
        #expect(try await index.setMembers(index.layout.allKey(slot: slot)).contains("soon") == false)
        // The version survives the sweep, so a replay of the same record stays ignored.
        #expect(try await index.appliedVersion(member: "soon", slotId: "soon") == 1)
    }

    @Test("reserve: versions grow; If-Match mismatch is 412, a second conditional writer 409, a deleted id 410")
    func reservations() async throws {
        let redis = try TestRedis()
        let index = RegistryFixtures.index(redis)
        guard case .reserved(let first) = try await index.reserve(member: "r1", slotId: "r1", expected: nil, refuseGone: true) else {
            Issue.record("first reservation must succeed")
            return
        }
        try await index.apply(.registration(IndexedRegistration(RegistryFixtures.registration("r1", tags: [], version: first))))
        #expect(
            try await index.reserve(member: "r1", slotId: "r1", expected: first - 1, refuseGone: true)
                == .preconditionFailed(current: first))
        guard case .reserved(let second) = try await index.reserve(member: "r1", slotId: "r1", expected: first, refuseGone: true) else {
            Issue.record("a matching If-Match must reserve")
            return
        }
        #expect(second > first)
        #expect(try await index.reserve(member: "r1", slotId: "r1", expected: first, refuseGone: true) == .conflict(inFlight: second))
        guard case .reserved(let third) = try await index.reserve(member: "r1", slotId: "r1", expected: nil, refuseGone: true) else {
            Issue.record("an unconditional write outbids a lease")
            return
        }
        #expect(third > second)
        try await index.apply(.registrationDeleted(id: "r1", version: third))
        #expect(try await index.reserve(member: "r1", slotId: "r1", expected: nil, refuseGone: true) == .gone)
        // Applying the newest reservation cleared the lease: nothing is left behind.
        let leases = try await index.pool.withConnection {
            try await $0.send(.hgetall(index.layout.leaseKey(slot: index.layout.slot(of: "r1"))))
        }
        #expect(leases.array?.isEmpty == true)
    }

    @Test("listing pages return every id exactly once", arguments: [1, 7, 100])
    func paging(limit: Int) async throws {
        let redis = try TestRedis()
        // Few slots, many ids: sets large enough that Redis stores them as hash tables, so
        // SSCAN really pages instead of answering whole sets.
        let index = RegistryFixtures.index(redis, slots: 4)
        let ids = (0..<1_200).map { "reg-\($0)" }
        for chunk in stride(from: 0, to: ids.count, by: 300) {
            try await _ = index.apply(
                ids[chunk..<chunk + 300].map { id in
                    .registration(
                        IndexedRegistration(RegistryFixtures.registration(id, tags: ["All", id.hasSuffix("7") ? "Seven" : "Other"])))
                })
        }
        for (membership, expected) in [
            (RegistrationIndex.Membership.all, ids),
            (.tag("Seven"), ids.filter { $0.hasSuffix("7") }),
        ] {
            var seen: [String] = []
            var cursor: RegistrationIndex.ScanCursor?
            var pages = 0
            repeat {
                let page = try await index.scanIds(membership, limit: limit, from: cursor)
                seen += page.ids
                cursor = page.next
                pages += 1
                if let text = cursor?.description {
                    #expect(RegistrationIndex.ScanCursor(text, slotCount: 4) == cursor)
                }
            } while cursor != nil && pages < 10_000
            #expect(seen.count == expected.count)
            #expect(seen.sorted() == expected.sorted())
        }
    }

    @Test("a Redis laid out with another slot count is refused")
    func metaMismatch() async throws {
        let redis = try TestRedis()
        let prefix = RegistryFixtures.uniquePrefix()
        try await RegistryFixtures.index(redis, slots: 16, prefix: prefix).checkMeta()
        try await RegistryFixtures.index(redis, slots: 16, prefix: prefix).checkMeta()
        await #expect(throws: RegistryMetaMismatch.self) {
            try await RegistryFixtures.index(redis, slots: 32, prefix: prefix).checkMeta()
        }
    }
}
