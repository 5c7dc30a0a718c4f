import Foundation
import HTTPTypes
import HeraldDomain
import HummingbirdTesting
import Testing

@testable import HeraldAPI

@Suite("A hub's registration quotas")
struct RegistrationQuotaTests {
    static let limits = #"{"limits":{"maxRegistrations":3,"maxRegistrationsPerHandle":2,"maxTagsPerRegistration":2}}"#

    @Test("tags past the hub's limit get 400; registrations past the hub's or a handle's get 403 quota_exceeded; replacing adds none")
    func quotas() async throws {
        let hub = TestHub()
        hub.registrationCounts.set(hub: HubName("sports")!, 1)
        hub.registrationCounts.set(handle: Fixture.otherApnsToken, 2)
        try await hub.run { client async throws in
            #expect(try await client.call(.put, "/v1/hubs/sports", TestHub.manage, body: Self.limits).status == .ok)
            func newId() async throws -> String {
                let created = try await client.call(.post, "/v1/hubs/sports/registrationIDs", TestHub.listen)
                return try #require(try created.json()["registrationId"]?.stringValue)
            }
            let first = try await newId()
            let crowded = try await client.call(
                .put, "/v1/hubs/sports/registrations/\(first)", TestHub.listen, body: Fixture.registration(tags: ["a", "b", "c"]))
            #expect(crowded.status == .badRequest)
            #expect(crowded.issueFields == ["tags"], "\(crowded.text)")
            #expect(crowded.text.contains("maxTagsPerRegistration"))

            let put = { (id: String, body: String) in
                try await client.call(.put, "/v1/hubs/sports/registrations/\(id)", TestHub.listen, body: body)
            }
            #expect(try await put(first, Fixture.registration(tags: ["a"])).status == .ok)
            // The handle already has 2: a third is refused, whatever the hub's count.
            let sameDevice = try await put(try await newId(), Fixture.registration(tags: ["a"], handle: Fixture.otherApnsToken))
            #expect(sameDevice.status == .forbidden)
            #expect(sameDevice.errorCode == "quota_exceeded")
            #expect(sameDevice.text.contains("maxRegistrationsPerHandle is 2"), "\(sameDevice.text)")
            #expect(try await put(try await newId(), Fixture.registration(tags: ["b"])).status == .ok)
            // 1 counted + 2 admitted: the hub is full, within the count's freshness.
            let full = try await put(try await newId(), Fixture.registration(tags: ["c"]))
            #expect(full.status == .forbidden)
            #expect(full.errorCode == "quota_exceeded")
            #expect(full.text.contains("maxRegistrations is 3"), "\(full.text)")
            // Replacing a registration adds none.
            #expect(try await put(first, Fixture.registration(tags: ["a", "b"])).status == .ok)
            // An installation of two templates is two registrations.
            let installation = try await client.call(
                .put, "/v1/hubs/sports/installations/inst-1", TestHub.listen, body: Fixture.installation(tags: []))
            #expect(installation.status == .forbidden, "\(installation.text)")
            // The default hub has no quotas.
            let plain = try await client.call(.post, "/v1/registrationIDs", TestHub.listen)
            let plainId = try #require(try plain.json()["registrationId"]?.stringValue)
            #expect(
                try await client.call(
                    .put, "/v1/registrations/\(plainId)", TestHub.listen, body: Fixture.registration(tags: ["a", "b", "c"])
                )
                .status == .ok)
        }
        #expect(hub.registrationCounts.reads >= 2)
    }

    @Test("a hub that sets no maxRegistrations has the deployment's; the default hub has none")
    func deploymentDefault() async throws {
        var hub = TestHub()
        hub.defaultMaxRegistrations = 2
        hub.registrationCounts.set(hub: HubName("sports")!, 2)
        hub.registrationCounts.set(hub: .default, 5)
        try await hub.run { client async throws in
            let created = try await client.call(.post, "/v1/hubs/sports/registrationIDs", TestHub.listen)
            let id = try #require(try created.json()["registrationId"]?.stringValue)
            let full = try await client.call(.put, "/v1/hubs/sports/registrations/\(id)", TestHub.listen, body: Fixture.registration())
            #expect(full.status == .forbidden)
            #expect(full.errorCode == "quota_exceeded")
            #expect(full.text.contains("HERALD_HUB_MAX_REGISTRATIONS) is 2"), "\(full.text)")
            // A hub's own limit wins over the deployment's.
            let own = #"{"limits":{"maxRegistrations":3}}"#
            #expect(try await client.call(.put, "/v1/hubs/sports", TestHub.manage, body: own).status == .ok)
            #expect(
                try await client.call(.put, "/v1/hubs/sports/registrations/\(id)", TestHub.listen, body: Fixture.registration()).status
                    == .ok)
            let plain = try await client.call(.post, "/v1/registrationIDs", TestHub.listen)
            let plainId = try #require(try plain.json()["registrationId"]?.stringValue)
            #expect(
                try await client.call(.put, "/v1/registrations/\(plainId)", TestHub.listen, body: Fixture.registration()).status == .ok)
        }
    }

    @Test(
        "the default hub's limits come from the deployment's setting: tags, registrations per handle, registrations, sends per minute"
    )
    func defaultHubLimits() async throws {
        var hub = TestHub()
        hub.defaultHubLimits = try HubLimits.decodeLimits(
            Array(#"{"maxRegistrations":4,"maxRegistrationsPerHandle":1,"maxTagsPerRegistration":2,"sendsPerMinute":1}"#.utf8))
        hub.registrationCounts.set(hub: .default, 3)
        hub.registrationCounts.set(handle: Fixture.otherApnsToken, 1)
        try await hub.run { client async throws in
            func put(_ body: String) async throws -> TestResponse {
                let created = try await client.call(.post, "/v1/registrationIDs", TestHub.listen)
                let id = try #require(try created.json()["registrationId"]?.stringValue)
                return try await client.call(.put, "/v1/registrations/\(id)", TestHub.listen, body: body)
            }
            let crowded = try await put(Fixture.registration(tags: ["a", "b", "c"]))
            #expect(crowded.status == .badRequest && crowded.issueFields == ["tags"], "\(crowded.text)")
            let sameDevice = try await put(Fixture.registration(tags: ["a"], handle: Fixture.otherApnsToken))
            #expect(sameDevice.status == .forbidden && sameDevice.text.contains("maxRegistrationsPerHandle is 1"), "\(sameDevice.text)")
            #expect(try await put(Fixture.registration(tags: ["a"])).status == .ok)
            let full = try await put(Fixture.registration(tags: ["b"]))
            #expect(full.status == .forbidden && full.text.contains("HERALD_DEFAULT_HUB_LIMITS"), "\(full.text)")
            let event = #"{"properties":{"News_English":"x"}}"#
            #expect(try await client.call(.post, "/v1/notifications", TestHub.send, body: event).status == .accepted)
            let over = try await client.call(.post, "/v1/notifications", TestHub.send, body: event)
            #expect(over.status == .forbidden && over.errorCode == "quota_exceeded", "\(over.text)")
        }
    }

    @Test("a hub's limits for the default hub are read from JSON with a hub document's members and ranges, naming what is wrong")
    func defaultHubLimitsAreChecked() throws {
        #expect(try HubLimits.decodeLimits(Array("{}".utf8)) == HubLimits())
        #expect(try HubLimits.decodeLimits(Array(#"{"maxTemplates":10}"#.utf8)).maxTemplates == 10)
        let unknown = #expect(throws: ValidationFailure.self) { try HubLimits.decodeLimits(Array(#"{"maxDevices":10}"#.utf8)) }
        #expect(unknown?.issues.map(\.field) == ["limits.maxDevices"])
        let range = #expect(throws: ValidationFailure.self) { try HubLimits.decodeLimits(Array(#"{"maxRegistrations":0}"#.utf8)) }
        #expect(range?.issues.map(\.field) == ["limits.maxRegistrations"])
        #expect(throws: ValidationFailure.self) { try HubLimits.decodeLimits(Array("[1]".utf8)) }
    }

    @Test("a template past the hub's maxTemplates gets 403 quota_exceeded; its known templates and native registrations pass")
    func templates() async throws {
        let hub = TestHub()
        try await hub.run { client async throws in
            let limits = #"{"limits":{"maxTemplates":3}}"#
            #expect(try await client.call(.put, "/v1/hubs/sports", TestHub.manage, body: limits).status == .ok)
            func put(_ body: String) async throws -> TestResponse {
                let created = try await client.call(.post, "/v1/hubs/sports/registrationIDs", TestHub.listen)
                let id = try #require(try created.json()["registrationId"]?.stringValue)
                return try await client.call(.put, "/v1/hubs/sports/registrations/\(id)", TestHub.listen, body: body)
            }
            // An installation brings two templates, a registration a third; the same again passes.
            #expect(
                try await client.call(.put, "/v1/hubs/sports/installations/inst-1", TestHub.listen, body: Fixture.installation()).status
                    == .ok)
            #expect(try await put(Fixture.registration(template: Fixture.newsTemplate("French"))).status == .ok)
            #expect(try await put(Fixture.registration(template: Fixture.newsTemplate("French"))).status == .ok)
            let fourth = try await put(Fixture.registration(template: Fixture.newsTemplate("Mandarin")))
            #expect(fourth.status == .forbidden)
            #expect(fourth.errorCode == "quota_exceeded")
            #expect(fourth.text.contains("has had 3 distinct templates; its maxTemplates is 3"), "\(fourth.text)")
            #expect(try await put(Fixture.registration()).status == .ok)
            // The default hub has no limit.
            let plain = try await client.call(.post, "/v1/registrationIDs", TestHub.listen)
            let plainId = try #require(try plain.json()["registrationId"]?.stringValue)
            let body = Fixture.registration(template: Fixture.newsTemplate("Mandarin"))
            #expect(try await client.call(.put, "/v1/registrations/\(plainId)", TestHub.listen, body: body).status == .ok)
        }
    }
}
