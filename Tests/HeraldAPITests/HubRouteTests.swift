import Foundation
import HTTPTypes
import HeraldAPI
import HeraldDomain
import Hummingbird
import HummingbirdTesting
import Testing

@Suite("Hub routes: /v1/hubs/{hub}/…")
struct HubRouteTests {
    static let sports = HubName("sports")!

    @Test func aHubsRegistrationsAndInstallationsAreItsOwn() async throws {
        let hub = TestHub()
        var patchHeaders = TestHub.listen
        patchHeaders[.contentType] = "application/json-patch+json"
        try await hub.run { [patchHeaders] client async throws in
            let created = try await client.call(.post, "/v1/hubs/sports/registrationIDs", TestHub.listen)
            #expect(created.status == .created)
            let id = try #require(try created.json()["registrationId"]?.stringValue)
            #expect(created.headers[.location] == "/v1/hubs/sports/registrations/\(id)")

            let put = try await client.call(.put, "/v1/hubs/Sports/registrations/\(id)", TestHub.listen, body: Fixture.registration())
            #expect(put.status == .ok)
            #expect(try put.json()["hub"]?.stringValue == "sports")
            #expect(try await client.call(.get, "/v1/hubs/sports/registrations/\(id)", TestHub.listen).status == .ok)
            #expect(try await client.call(.get, "/v1/registrations/\(id)", TestHub.listen).status == .notFound)
            #expect(try await client.call(.get, "/v1/hubs/news/registrations/\(id)", TestHub.listen).status == .notFound)

            let installation = try await client.call(
                .put, "/v1/hubs/sports/installations/inst-1", TestHub.listen, body: Fixture.installation())
            #expect(installation.status == .ok)
            #expect(try installation.json()["hub"]?.stringValue == "sports")
            #expect(try await client.call(.get, "/v1/installations/inst-1", TestHub.listen).status == .notFound)
            let patched = try await client.call(
                .patch, "/v1/hubs/sports/installations/inst-1", patchHeaders,
                body: #"[{"op":"add","path":"/tags/-","value":"Football"}]"#)
            #expect(patched.status == .ok, "\(patched.text)")
            let moved = try await client.call(
                .patch, "/v1/hubs/sports/installations/inst-1", patchHeaders,
                body: #"[{"op":"replace","path":"/hub","value":"news"}]"#)
            #expect(moved.status == .badRequest)
            #expect(moved.errorField == "[0].path", "a patch cannot move an installation to another hub")
        }
        #expect(hub.registry.writes == 0, "nothing was written to the default hub")
    }

    @Test func aBodyNamingAnotherHubOrABadHubNameIsRefused() async throws {
        let hub = TestHub()
        let id = hub.registry.store(for: Self.sports).issueRegistrationId()
        try await hub.run { client async throws in
            let other = Fixture.registration().replacingOccurrences(of: "{", with: #"{"hub":"news","#, options: .anchored)
            let refused = try await client.call(.put, "/v1/hubs/sports/registrations/\(id)", TestHub.listen, body: other)
            #expect(refused.status == .badRequest)
            #expect(refused.errorField == "hub")
            #expect(refused.text.contains(#"names hub \"news\" but the request is for hub \"sports\""#), "\(refused.text)")

            let badName = try await client.call(.get, "/v1/hubs/-sports/registrations/\(id)", TestHub.listen)
            #expect(badName.status == .badRequest)
            #expect(badName.errorField == "hub")
        }
    }

    @Test func notificationsArePublishedAndReadInTheirHub() async throws {
        var hub = TestHub()
        var sportsStatus = StatusRecord.accepted(eventId: "goal-1", taskCount: 1, publishedAt: nil, acceptedAt: Date())
        sportsStatus.hub = Self.sports
        hub.statusReader.records["sports/goal-1"] = sportsStatus
        let publisher = hub.publisher
        try await hub.run { client async throws in
            let published = try await client.call(
                .post, "/v1/hubs/sports/notifications", TestHub.send, body: #"{"id":"goal-1","tags":"Football","properties":{}}"#)
            #expect(published.status == .accepted)
            #expect(published.headers[.location] == "/v1/hubs/sports/notifications/goal-1")
            #expect(publisher.last?.event.hub == Self.sports)
            let body = String(decoding: publisher.last?.body ?? [], as: UTF8.self)
            #expect(body.hasPrefix(#"{"hub":"sports","id":"goal-1""#))

            let status = try await client.call(.get, "/v1/hubs/sports/notifications/goal-1", TestHub.send)
            #expect(status.status == .ok)
            #expect(try status.json()["hub"]?.stringValue == "sports")
            #expect(try await client.call(.get, "/v1/notifications/goal-1", TestHub.send).status == .notFound)

            let scheduled = try await client.call(
                .post, "/v1/hubs/sports/notifications", TestHub.send,
                body: #"{"tags":"Football","properties":{},"sendAt":"2099-01-01T00:00:00Z"}"#)
            #expect(scheduled.status == .badRequest)
            #expect(scheduled.errorField == "sendAt")
            #expect(scheduled.text.contains("not built"))
        }
        #expect(publisher.count == 1)
    }
}
