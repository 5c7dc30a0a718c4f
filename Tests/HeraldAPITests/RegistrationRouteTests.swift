import HTTPTypes
import HeraldAPI
import HeraldDomain
import Hummingbird
import HummingbirdTesting
import Testing

@Suite("Registrations")
struct RegistrationRouteTests {
    @Test func issuesIdsThenUpsertsReadsAndDeletes() async throws {
        let hub = TestHub()
        try await hub.run { client async throws in
            let created = try await client.call(.post, "/v1/registrationIDs", TestHub.listen)
            #expect(created.status == .created)
            let id = try #require(try created.json()["registrationId"]?.stringValue)
            #expect(created.headers[.location] == "/v1/registrations/\(id)")

            let put = try await client.call(
                .put, "/v1/registrations/\(id)", TestHub.listen, body: Fixture.registration(template: Fixture.newsTemplate("French")))
            #expect(put.status == .ok)
            #expect(put.headers[.eTag] == "\"1\"")
            #expect(try put.json()["tags"]?.strings == ["World", "Science"])

            let updated = try await client.call(
                .put, "/v1/registrations/\(id)", TestHub.listen, body: Fixture.registration(tags: ["Politics"]))
            #expect(updated.headers[.eTag] == "\"2\"")

            // Read-your-writes: the GET right after the PUT sees the new version.
            let read = try await client.call(.get, "/v1/registrations/\(id)", TestHub.listen)
            #expect(read.status == .ok)
            #expect(read.headers[.eTag] == "\"2\"")
            #expect(try read.json()["tags"]?.strings == ["Politics"])
            #expect(try read.json()["registrationId"]?.stringValue == id)

            let deleted = try await client.call(.delete, "/v1/registrations/\(id)", TestHub.listen)
            #expect(deleted.status == .noContent)
            #expect(try await client.call(.get, "/v1/registrations/\(id)", TestHub.listen).status == .gone)
        }
        #expect(hub.registry.writes == 3)
    }

    @Test func putOnADeletedIdIsGoneSoTheDeviceAsksForANewOne() async throws {
        let hub = TestHub()
        let id = hub.registry.issueRegistrationId()
        try await hub.run { client async throws in
            #expect(try await client.call(.put, "/v1/registrations/\(id)", TestHub.listen, body: Fixture.registration()).status == .ok)
            #expect(try await client.call(.delete, "/v1/registrations/\(id)", TestHub.listen).status == .noContent)
            let again = try await client.call(.put, "/v1/registrations/\(id)", TestHub.listen, body: Fixture.registration())
            #expect(again.status == .gone)
            #expect(again.errorCode == "gone")
        }
        #expect(hub.registry.writes == 2)
    }

    @Test func putOnAnIdNeverIssuedIsGoneAndWritesNothing() async throws {
        let hub = TestHub()
        try await hub.run { client async throws in
            let response = try await client.call(.put, "/v1/registrations/made-up-id", TestHub.listen, body: Fixture.registration())
            #expect(response.status == .gone)
            #expect(response.text.contains("registrationIDs"))
        }
        #expect(hub.registry.writes == 0)
    }

    @Test func getOfAnIssuedButUnwrittenIdIsNotFound() async throws {
        let hub = TestHub()
        let id = hub.registry.issueRegistrationId()
        try await hub.run { client async throws in
            let response = try await client.call(.get, "/v1/registrations/\(id)", TestHub.listen)
            #expect(response.status == .notFound)
            #expect(response.errorCode == "not_found")
        }
    }

    @Test func ifMatchGuardsPutAndDelete() async throws {
        let hub = TestHub()
        let id = hub.registry.issueRegistrationId()
        try await hub.run { client async throws in
            try await client.call(.put, "/v1/registrations/\(id)", TestHub.listen, body: Fixture.registration())
            let stalePut = try await client.call(
                .put, "/v1/registrations/\(id)", TestHub.listen, body: Fixture.registration(tags: ["X"]), ifMatch: "\"7\"")
            #expect(stalePut.status == .preconditionFailed)
            #expect(stalePut.errorField == "If-Match")
            let staleDelete = try await client.call(.delete, "/v1/registrations/\(id)", TestHub.listen, ifMatch: "\"7\"")
            #expect(staleDelete.status == .preconditionFailed)

            let currentPut = try await client.call(
                .put, "/v1/registrations/\(id)", TestHub.listen, body: Fixture.registration(tags: ["X"]), ifMatch: "\"1\"")
            #expect(currentPut.status == .ok)
            #expect(currentPut.headers[.eTag] == "\"2\"")
            let badTag = try await client.call(.delete, "/v1/registrations/\(id)", TestHub.listen, ifMatch: "version-two")
            #expect(badTag.status == .badRequest)
            #expect(try await client.call(.delete, "/v1/registrations/\(id)", TestHub.listen, ifMatch: "\"2\"").status == .noContent)
        }
        #expect(hub.registry.writes == 3)
    }

    @Test func listsByTagAndHandleInPages() async throws {
        let hub = TestHub()
        try await hub.run { client async throws in
            for (index, tags) in [["World"], ["World", "Sports"], ["Sports"], ["World"]].enumerated() {
                let id = hub.registry.issueRegistrationId()
                let handle = index == 3 ? Fixture.otherApnsToken : Fixture.apnsToken
                try await client.call(
                    .put, "/v1/registrations/\(id)", TestHub.manage, body: Fixture.registration(tags: tags, handle: handle))
            }
            let first = try await client.call(.get, "/v1/registrations?tag=World&limit=2", TestHub.manage)
            #expect(first.status == .ok)
            #expect(try first.json()["items"]?.arrayValue?.count == 2)
            let cursor = try #require(try first.json()["nextCursor"]?.stringValue)
            let second = try await client.call(.get, "/v1/registrations?tag=World&limit=2&cursor=\(cursor)", TestHub.manage)
            #expect(try second.json()["items"]?.arrayValue?.count == 1)
            #expect(try second.json()["nextCursor"] == .null)

            let byHandle = try await client.call(.get, "/v1/registrations?handle=\(Fixture.otherApnsToken)", TestHub.manage)
            #expect(try byHandle.json()["items"]?.arrayValue?.count == 1)
            let byStart = try await client.call(
                .get, "/v1/registrations?handlePrefix=\(Fixture.otherApnsToken.prefix(12))", TestHub.manage)
            #expect(try byStart.json()["items"]?.arrayValue?.count == 1, "\(byStart.text)")
            let twoFilters = try await client.call(.get, "/v1/registrations?tag=World&handlePrefix=ab", TestHub.manage)
            #expect(twoFilters.status == .badRequest && twoFilters.errorField == "handlePrefix", "\(twoFilters.text)")

            #expect(try await client.call(.get, "/v1/registrations?limit=0", TestHub.manage).errorField == "limit")
            #expect(try await client.call(.get, "/v1/registrations?tag=bad%20tag", TestHub.manage).errorField == "tag")
        }
    }
}
