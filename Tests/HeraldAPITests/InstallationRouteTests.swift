import HTTPTypes
import HeraldAPI
import HeraldDomain
import Hummingbird
import HummingbirdTesting
import Testing

@Suite("Installations")
struct InstallationRouteTests {
    @Test func putsReadsListsAndDeletes() async throws {
        let hub = TestHub()
        try await hub.run { client async throws in
            let put = try await client.call(.put, "/v1/installations/phone-1", TestHub.manage, body: Fixture.installation(userId: "alice"))
            #expect(put.status == .ok)
            #expect(put.headers[.eTag] == "\"1\"")
            let stored = try put.json()
            #expect(stored["installationId"]?.stringValue == "phone-1")
            #expect(stored["templates"]?["french"]?["tags"]?.strings == ["lang-fr"])

            // alice's installation: Manage (or alice) reads it, Listen may not (OwnershipTests).
            let read = try await client.call(.get, "/v1/installations/phone-1", TestHub.manage)
            #expect(read.status == .ok)
            #expect(try read.json()["userId"]?.stringValue == "alice")

            try await client.call(.put, "/v1/installations/tablet-2", TestHub.manage, body: Fixture.installation(tags: ["Sports"]))
            let byUser = try await client.call(.get, "/v1/installations?userId=alice", TestHub.manage)
            #expect(try byUser.json()["items"]?.arrayValue?.map { $0["installationId"]?.stringValue } == ["phone-1"])
            let byTemplateTag = try await client.call(.get, "/v1/installations?tag=lang-fr", TestHub.manage)
            #expect(try byTemplateTag.json()["items"]?.arrayValue?.count == 2)
            let bySharedTag = try await client.call(.get, "/v1/installations?tag=Sports", TestHub.manage)
            #expect(try bySharedTag.json()["items"]?.arrayValue?.map { $0["installationId"]?.stringValue } == ["tablet-2"])

            #expect(try await client.call(.delete, "/v1/installations/phone-1", TestHub.manage).status == .noContent)
            #expect(try await client.call(.get, "/v1/installations/phone-1", TestHub.listen).status == .gone)
            #expect(try await client.call(.get, "/v1/installations/never", TestHub.listen).status == .notFound)
        }
    }

    @Test func jsonPatchSequenceChangesTagsTemplatesAndChannel() async throws {
        let hub = TestHub()
        try await hub.run { client async throws in
            try await client.call(
                .put, "/v1/installations/phone-1", TestHub.listen, body: Fixture.installation(tags: ["World", "Politics"]))
            let patch = """
                [{"op":"add","path":"/tags","value":"Science"},
                 {"op":"remove","path":"/tags/Politics"},
                 {"op":"add","path":"/templates/mandarin","value":{"body":\(Fixture.newsTemplate("Mandarin")),"tags":["lang-zh"]}},
                 {"op":"remove","path":"/templates/french"},
                 {"op":"add","path":"/templates/english/tags/-","value":"breaking"},
                 {"op":"replace","path":"/templates/english/headers","value":{"apns-push-type":"alert"}},
                 {"op":"replace","path":"/pushChannel","value":"\(Fixture.otherApnsToken)"}]
                """
            var headers = TestHub.listen
            headers[.contentType] = "application/json-patch+json"
            let patched = try await client.execute(
                uri: "/v1/installations/phone-1", method: .patch, headers: headers, body: .init(string: patch))
            #expect(patched.status == .ok)
            #expect(patched.headers[.eTag] == "\"2\"")

            let read = try await client.call(.get, "/v1/installations/phone-1", TestHub.listen).json()
            #expect(read["tags"]?.strings == ["World", "Science"])
            #expect(read["pushChannel"]?.stringValue == Fixture.otherApnsToken)
            #expect(read["templates"]?["french"] == nil)
            #expect(read["templates"]?["mandarin"]?["tags"]?.strings == ["lang-zh"])
            #expect(read["templates"]?["english"]?["tags"]?.strings == ["lang-en", "breaking"])
            #expect(read["templates"]?["english"]?["headers"]?["apns-push-type"]?.stringValue == "alert")

            let stale = try await client.call(
                .patch, "/v1/installations/phone-1", TestHub.listen, body: #"[{"op":"add","path":"/tags","value":"X"}]"#, ifMatch: "\"1\"")
            #expect(stale.status == .preconditionFailed)
        }
        #expect(hub.registry.writes == 2)
    }

    @Test(arguments: [
        (#"[{"op":"replace","path":"/platform","value":"fcm"}]"#, "[0].path", 400),
        (#"[{"op":"remove","path":"/pushChannel"}]"#, "[0].path", 400),
        (#"[{"op":"copy","from":"/tags","path":"/x"}]"#, "[0].op", 400),
        (#"[{"op":"add","path":"/tags","value":"Science","test":true}]"#, "[0].test", 400),
        (
            #"[{"op":"add","path":"/templates/english/body","value":"{\"aps\":{\"alert\":\"$(News_English\"}}"}]"#,
            "templates.english.body", 400
        ),
        (#"[{"op":"add","path":"/tags","value":"bad tag!"}]"#, "tags[1]", 400),
        (#"[{"op":"add","path":"/tags","value":"$UserId:{mallory}"}]"#, "tags[1]", 403),
        (#"[{"op":"add","path":"/tags",#"#, "", 400),
    ])
    func refusedPatchesNameTheFieldAndWriteNothing(patch: String, field: String, status: Int) async throws {
        let hub = TestHub()
        try await hub.run { client async throws in
            try await client.call(.put, "/v1/installations/phone-1", TestHub.listen, body: Fixture.installation())
            let response = try await client.call(.patch, "/v1/installations/phone-1", TestHub.listen, body: patch)
            #expect(response.status.code == status)
            #expect((response.errorField ?? "") == field, "\(response.text)")
        }
        #expect(hub.registry.writes == 1)
    }

    @Test func patchOfAMissingInstallationIsNotFound() async throws {
        let hub = TestHub()
        try await hub.run { client async throws in
            let response = try await client.call(
                .patch, "/v1/installations/nope", TestHub.listen, body: #"[{"op":"add","path":"/tags","value":"X"}]"#)
            #expect(response.status == .notFound)
        }
        #expect(hub.registry.writes == 0)
    }
}
