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
                body: #"{"tags":"Football","properties":{},"sendAt":"\#(ISO8601Timestamp.format(Date().addingTimeInterval(3_600)))"}"#)
            #expect(scheduled.status == .accepted, "\(scheduled.text)")
            #expect(try scheduled.json()["state"]?.stringValue == "scheduled")
            #expect(publisher.last?.event.hub == Self.sports && publisher.last?.event.schedule != nil)
        }
        #expect(publisher.count == 2)
    }
}

@Suite("Hubs as data: /v1/hubs, each hub's policies, keys and quota")
struct HubManagementTests {
    @Test func aNamespaceManagerCreatesChangesReadsAndDeletesHubs() async throws {
        let hub = TestHub()
        try await hub.run { client async throws in
            let created = try await client.call(.put, "/v1/hubs/News", TestHub.manage)
            #expect(created.status == .created)
            #expect(created.headers[.location] == "/v1/hubs/news")
            #expect(!created.text.contains("Key"), "a read never answers keys: \(created.text)")
            let policies = try created.json()["policies"]
            #expect(policies?[0]?["name"]?.stringValue == "DefaultListenSharedAccessSignature")
            #expect(policies?[1]?["rights"]?.strings == ["listen", "manage", "send"])

            let listed = try await client.call(.get, "/v1/hubs", TestHub.manage)
            #expect(try listed.json()["hubs"]?.arrayValue?.compactMap { $0["name"]?.stringValue } == ["news", "sports"])
            #expect(try await client.call(.get, "/v1/hubs", TestHub.listen).status == .forbidden)
            #expect(try await client.call(.put, "/v1/hubs/other", TestHub.send).status == .forbidden)
            #expect(try await client.call(.put, "/v1/hubs/default", TestHub.manage).status == .badRequest)

            let changed = try await client.call(
                .put, "/v1/hubs/news", TestHub.manage,
                body: #"{"policies":[{"name":"app","rights":["Listen"]}],"limits":{"sendsPerMinute":5}}"#)
            #expect(changed.status == .ok)
            #expect(try changed.json()["version"]?.intValue == 2)
            #expect(try changed.json()["limits"]?["sendsPerMinute"]?.intValue == 5)
            let refused = try await client.call(
                .put, "/v1/hubs/news", TestHub.manage, body: #"{"policies":[{"name":"app","rights":["post"],"primaryKey":"x"}]}"#)
            #expect(refused.status == .badRequest)
            #expect(Set(refused.issueFields) == ["policies[0].primaryKey", "policies[0].rights[0]"])

            let keys = try await client.call(.post, "/v1/hubs/news/policies/app/keys", TestHub.manage)
            #expect(keys.status == .ok)
            let primary = try #require(try keys.json()["primaryKey"]?.stringValue)
            #expect(primary.count == 44)
            #expect(
                try keys.json()["primaryConnectionString"]?.stringValue
                    == "Endpoint=sb://localhost:8080/;SharedAccessKeyName=app;SharedAccessKey=\(primary)")

            #expect(try await client.call(.delete, "/v1/hubs/news", TestHub.manage).status == .noContent)
            #expect(try await client.call(.get, "/v1/hubs/news", TestHub.manage).status == .notFound)
            let gone = try await client.call(.get, "/v1/hubs/news/registrations?handle=x", TestHub.manage)
            #expect(gone.status == .notFound)
            #expect(gone.text.contains("PUT /v1/hubs/news"))
            // Without a valid token nobody learns whether a hub exists.
            #expect(try await client.call(.get, "/v1/hubs/news/registrations?handle=x").status == .unauthorized)
        }
    }

    @Test func aHubsOwnPolicyWorksOnItsRoutesOnlyAndItsKeysRotate() async throws {
        let hub = TestHub()
        let event = #"{"tags":"Football","properties":{}}"#
        try await hub.run { client async throws in
            #expect(try await client.call(.put, "/v1/hubs/news", TestHub.manage).status == .created)
            let keys = try await client.call(.post, "/v1/hubs/sports/policies/DefaultFullSharedAccessSignature/keys", TestHub.manage)
            let primary = try #require(try keys.json()["primaryKey"]?.stringValue)
            let secondary = try #require(try keys.json()["secondaryKey"]?.stringValue)
            let full = TestHub.sas("DefaultFullSharedAccessSignature", key: primary)
            let fullSecondary = TestHub.sas("DefaultFullSharedAccessSignature", key: secondary)

            #expect(try await client.call(.post, "/v1/hubs/sports/notifications", full, body: event).status == .accepted)
            #expect(try await client.call(.post, "/v1/hubs/sports/notifications", fullSecondary, body: event).status == .accepted)
            #expect(try await client.call(.post, "/v1/notifications", full, body: event).status == .unauthorized)
            #expect(try await client.call(.post, "/v1/hubs/news/notifications", full, body: event).status == .unauthorized)
            // A hub's Manage policy manages its hub's devices, not the deployment's hubs.
            #expect(try await client.call(.get, "/v1/hubs/sports", full).status == .unauthorized)

            let rotated = try await client.call(
                .post, "/v1/hubs/sports/policies/DefaultFullSharedAccessSignature/regenerate", TestHub.manage,
                body: #"{"keyType":"primary"}"#)
            #expect(rotated.status == .ok)
            #expect(try rotated.json()["primaryKey"]?.stringValue != primary)
            #expect(try rotated.json()["secondaryKey"]?.stringValue == secondary)
            #expect(try await client.call(.post, "/v1/hubs/sports/notifications", full, body: event).status == .unauthorized)
            #expect(try await client.call(.post, "/v1/hubs/sports/notifications", fullSecondary, body: event).status == .accepted)

            let listen = try await client.call(.post, "/v1/hubs/sports/policies/DefaultListenSharedAccessSignature/keys", TestHub.manage)
            let listenToken = TestHub.sas(
                "DefaultListenSharedAccessSignature", key: try #require(try listen.json()["primaryKey"]?.stringValue))
            #expect(try await client.call(.post, "/v1/hubs/sports/notifications", listenToken, body: event).status == .forbidden)
            #expect(try await client.call(.post, "/v1/hubs/sports/registrationIDs", listenToken).status == .created)
        }
        #expect(hub.publisher.count == 3)
    }

    @Test func aHubPolicyNamedLikeANamespacePolicyIsTriedToo() async throws {
        let hub = TestHub()
        let event = #"{"tags":"Football","properties":{}}"#
        try await hub.run { client async throws in
            #expect(
                try await client.call(.put, "/v1/hubs/sports", TestHub.manage, body: #"{"policies":[{"name":"send","rights":["send"]}]}"#)
                    .status == .ok)
            let keys = try await client.call(.post, "/v1/hubs/sports/policies/send/keys", TestHub.manage)
            let own = TestHub.sas("send", key: try #require(try keys.json()["primaryKey"]?.stringValue))
            #expect(try await client.call(.post, "/v1/hubs/sports/notifications", own, body: event).status == .accepted)
            #expect(try await client.call(.post, "/v1/hubs/sports/notifications", TestHub.send, body: event).status == .accepted)
            #expect(try await client.call(.post, "/v1/notifications", own, body: event).status == .unauthorized)
        }
    }

    @Test func aHubsSendQuotaRefusesItsExcessWithoutTouchingOtherHubs() async throws {
        let hub = TestHub()
        let event = #"{"tags":"Football","properties":{}}"#
        try await hub.run { client async throws in
            #expect(
                try await client.call(.put, "/v1/hubs/sports", TestHub.manage, body: #"{"limits":{"sendsPerMinute":2}}"#).status == .ok)
            #expect(try await client.call(.post, "/v1/hubs/sports/notifications", TestHub.send, body: event).status == .accepted)
            #expect(try await client.call(.post, "/v1/hubs/sports/notifications", TestHub.send, body: event).status == .accepted)
            let over = try await client.call(.post, "/v1/hubs/sports/notifications", TestHub.send, body: event)
            #expect(over.status == .forbidden)
            #expect(over.errorCode == "quota_exceeded")
            for _ in 0..<3 {
                #expect(try await client.call(.post, "/v1/notifications", TestHub.send, body: event).status == .accepted)
            }
        }
        #expect(hub.publisher.count == 5)
    }

    @Test(
        "a native payload over the hub's maxPayloadBytes is refused naming it, on /v1 and the Azure routes; other hubs keep the platforms' limits"
    )
    func aHubsPayloadLimitRefusesLargerNativePayloads() async throws {
        let hub = TestHub()
        let alert = String(repeating: "x", count: 200)
        let native = #"{"native":{"apns":{"aps":{"alert":"\#(alert)"}}}}"#
        try await hub.run { client async throws in
            #expect(
                try await client.call(.put, "/v1/hubs/sports", TestHub.manage, body: #"{"limits":{"maxPayloadBytes":128}}"#).status == .ok)
            let over = try await client.call(.post, "/v1/hubs/sports/notifications", TestHub.send, body: native)
            #expect(over.status == .badRequest, "\(over.text)")
            #expect(over.text.contains("native.apns") && over.text.contains("at most 128"), "\(over.text)")
            var headers = TestHub.send
            headers[HTTPField.Name("ServiceBusNotification-Format")!] = "apple"
            let azure = try await client.call(.post, "/sports/messages", headers, body: #"{"aps":{"alert":"\#(alert)"}}"#)
            #expect(azure.status == .badRequest && azure.text.contains("at most 128"), "\(azure.text)")
            #expect(try await client.call(.post, "/v1/notifications", TestHub.send, body: native).status == .accepted)
            let small = #"{"native":{"apns":{"aps":{"alert":"hi"}}}}"#
            #expect(try await client.call(.post, "/v1/hubs/sports/notifications", TestHub.send, body: small).status == .accepted)
        }
        #expect(hub.publisher.count == 2)
    }
}
