import Foundation
import HeraldDomain
import HeraldTestSupport
import Testing
@testable import HeraldRegistry

@Suite("Registration service on a real broker and Redis", .heavy)
struct RegistrationServiceTests {
    @Test("put, read back, update tags, delete: read-your-writes, versions, 410 afterwards")
    func registrationLifecycle() async throws {
        let broker = try TestBroker()
        let redis = try TestRedis()
        let service = try await RegistrationService.fixture(broker: broker, redis: redis)
        let id = service.issueRegistrationId()

        let first = try await service.put(RegistryFixtures.registration(id, tags: ["World", "Science"], version: 0), expectedVersion: nil)
        #expect(first.version > 0)
        guard case .found(let read) = try await service.registration(id: id) else {
            Issue.record("a GET right after a PUT must find the registration")
            return
        }
        #expect(read == first)
        #expect(try await service.index.idsWithTag("Science") == [id])

        let second = try await service.put(RegistryFixtures.registration(id, tags: ["World", "Sports"]), expectedVersion: first.version)
        #expect(second.version > first.version)
        #expect(try await service.index.idsWithTag("Science") == [])
        #expect(try await service.index.idsWithTag("Sports") == [id])

        await #expect(throws: RegistryError.self) {
            try await service.delete(id: id, expectedVersion: first.version)
        }
        try await service.delete(id: id, expectedVersion: second.version)
        guard case .gone = try await service.registration(id: id) else {
            Issue.record("a deleted registration must read as gone")
            return
        }
        #expect(try await service.index.idsWithTag("World") == [])
        let afterDelete = await service.errorCode {
            _ = try await service.put(RegistryFixtures.registration(id, tags: []), expectedVersion: nil)
        }
        #expect(afterDelete == .gone)
    }

    @Test("410 for never-issued ids, 412 for a stale If-Match, 400 with issues for a bad registration")
    func refusals() async throws {
        let broker = try TestBroker()
        let redis = try TestRedis()
        let service = try await RegistrationService.fixture(broker: broker, redis: redis)

        let forged = await service.errorCode {
            _ = try await service.put(RegistryFixtures.registration("not-issued-1", tags: []), expectedVersion: nil)
        }
        #expect(forged == .gone)

        let id = service.issueRegistrationId()
        let stored = try await service.put(RegistryFixtures.registration(id, tags: ["A"]), expectedVersion: nil)
        var stale: RegistryError?
        do {
            _ = try await service.put(RegistryFixtures.registration(id, tags: ["B"]), expectedVersion: stored.version - 1)
        } catch {
            stale = error
        }
        #expect(stale?.code == .preconditionFailed)
        #expect(stale?.currentVersion == stored.version)

        var invalid: RegistryError?
        do {
            _ = try await service.put(RegistryFixtures.registration(id, tags: ["bad tag!"]), expectedVersion: nil)
        } catch {
            invalid = error
        }
        #expect(invalid?.code == .invalid)
        #expect(invalid?.issues.contains { $0.field == "tags[0]" } == true)
        // Nothing of the refused writes reached the index.
        #expect(try await service.index.idsWithTag("B") == [])
        #expect(try await service.index.appliedVersion(member: id, slotId: id) == stored.version)

        let missing = await service.errorCode { try await service.delete(id: service.issueRegistrationId(), expectedVersion: nil) }
        #expect(missing == .notFound)
    }

    @Test("listing by tag, handle and the start of a handle pages through every registration once")
    func listing() async throws {
        let broker = try TestBroker()
        let redis = try TestRedis()
        let service = try await RegistrationService.fixture(broker: broker, redis: redis)
        var ids: [String] = []
        for number in 0..<25 {
            let id = service.issueRegistrationId()
            ids.append(id)
            _ = try await service.put(
                RegistryFixtures.registration(id, tags: number % 2 == 0 ? ["Even"] : ["Odd"], handle: RegistryFixtures.token(number % 3)),
                expectedVersion: nil
            )
        }
        func collect(_ query: RegistrationQuery) async throws -> [String] {
            var query = query
            var seen: [String] = []
            repeat {
                let page = try await service.list(query)
                // A page never holds more than `limit` (SSCAN pages can hold more ids).
                #expect(page.items.count <= query.limit, "\(page.items.count) items for limit \(query.limit)")
                seen += page.items.map(\.registrationId)
                query.cursor = page.nextCursor
            } while query.cursor != nil
            return seen
        }
        #expect(try await collect(RegistrationQuery(limit: 4)).sorted() == ids.sorted())
        #expect(try await collect(RegistrationQuery(limit: 1)).sorted() == ids.sorted())
        let even = ids.enumerated().filter { $0.offset % 2 == 0 }.map(\.element)
        #expect(try await collect(RegistrationQuery(tag: "Even", limit: 3)).sorted() == even.sorted())
        let h1 = ids.enumerated().filter { $0.offset % 3 == 1 }.map(\.element)
        #expect(try await collect(RegistrationQuery(handle: RegistryFixtures.token(1), limit: 2)).sorted() == h1.sorted())
        // By the start of a handle: the views are read slot by slot, a page resumes inside a slot.
        #expect(try await collect(RegistrationQuery(handlePrefix: RegistryFixtures.token(1), limit: 2)).sorted() == h1.sorted())
        #expect(try await collect(RegistrationQuery(handlePrefix: String(repeating: "a", count: 63), limit: 1)).sorted() == ids.sorted())
        #expect(try await collect(RegistrationQuery(handlePrefix: "b", limit: 5)).isEmpty)
        let both = await service.errorCode { _ = try await service.list(RegistrationQuery(tag: "Even", handlePrefix: "a", limit: 2)) }
        #expect(both == .invalid)
        let badCursor = await service.errorCode { _ = try await service.list(RegistrationQuery(limit: 2, cursor: "nonsense")) }
        #expect(badCursor == .invalid)
        let badLimit = await service.errorCode { _ = try await service.list(RegistrationQuery(limit: 0)) }
        #expect(badLimit == .invalid)
        #expect(await service.isReady())
    }

    @Test("installations: templates with their own tags, update drops a template, query by tag and user, delete")
    func installations() async throws {
        let broker = try TestBroker()
        let redis = try TestRedis()
        let service = try await RegistrationService.fixture(broker: broker, redis: redis)
        let body = #"{"aps":{"alert":"$(News_English)"}}"#
        var installation = Installation(
            installationId: "inst-alice", platform: .apns, pushChannel: RegistryFixtures.token(1), tags: ["World"], userId: "alice",
            templates: [
                "news": InstallationTemplate(body: body, tags: ["Politics"]),
                "sports": InstallationTemplate(body: body, tags: ["Sports"]),
            ]
        )
        let stored = try await service.putInstallation(installation, expectedVersion: nil)
        _ = try await service.putInstallation(
            Installation(
                installationId: "inst-bob", platform: .apns, pushChannel: RegistryFixtures.token(2), tags: ["World"], userId: "bob"),
            expectedVersion: nil
        )
        #expect(try await service.index.idsWithTag("Sports") == ["inst-alice:sports"])
        #expect(try await service.index.idsWithTag("World") == ["inst-alice:news", "inst-alice:sports", "inst-bob"])
        #expect(try await service.index.idsWithTag("$UserId:{alice}") == ["inst-alice:news", "inst-alice:sports"])

        func ids(_ query: InstallationQuery) async throws -> [String] {
            var query = query
            var seen: [String] = []
            repeat {
                let page = try await service.listInstallations(query)
                seen += page.items.map(\.installation.installationId)
                query.cursor = page.nextCursor
            } while query.cursor != nil
            return seen
        }
        #expect(try await ids(InstallationQuery(tag: "World", limit: 1)).sorted() == ["inst-alice", "inst-bob"])
        #expect(try await ids(InstallationQuery(tag: "Sports", limit: 10)) == ["inst-alice"])
        #expect(try await ids(InstallationQuery(userId: "bob", limit: 10)) == ["inst-bob"])
        #expect(try await ids(InstallationQuery(tag: "Sports", userId: "bob", limit: 10)) == [])

        // A patch-like update: drop the sports template, add a tag, conditional on the version read.
        installation.templates["sports"] = nil
        installation.tags.append("Science")
        let updated = try await service.putInstallation(installation, expectedVersion: stored.version)
        #expect(updated.version > stored.version)
        #expect(try await service.index.idsWithTag("Sports") == [])
        #expect(try await service.index.idsWithTag("Science") == ["inst-alice:news"])
        guard case .found(let read) = try await service.installation(id: "inst-alice") else {
            Issue.record("the installation must be readable after its update")
            return
        }
        #expect(read.installation == installation)
        #expect(read.version == updated.version)
        let stale = await service.errorCode { _ = try await service.putInstallation(installation, expectedVersion: stored.version) }
        #expect(stale == .preconditionFailed)

        try await service.deleteInstallation(id: "inst-alice", expectedVersion: nil)
        guard case .gone = try await service.installation(id: "inst-alice") else {
            Issue.record("a deleted installation must read as gone")
            return
        }
        #expect(try await service.index.idsWithTag("World") == ["inst-bob"])
        #expect(try await ids(InstallationQuery(userId: "alice", limit: 10)) == [])
    }
}

extension RegistrationService {
    static func fixture(broker: TestBroker, redis: TestRedis) async throws -> RegistrationService {
        try await RegistryFixtures.service(broker: broker, redis: redis, configuration: RegistryFixtures.configuration())
    }

    /// The code of the `RegistryError` `body` throws; nil when it succeeds or throws another error.
    func errorCode(_ body: () async throws -> Void) async -> RegistryError.Code? {
        do {
            try await body()
            return nil
        } catch {
            return (error as? RegistryError)?.code
        }
    }
}
