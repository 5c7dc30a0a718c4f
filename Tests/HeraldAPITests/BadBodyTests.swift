import HTTPTypes
import HeraldAPI
import HeraldDomain
import Hummingbird
import HummingbirdTesting
import Testing

@Suite("Bad request bodies")
struct BadBodyTests {
    static let hugeTemplate = "\"" + String(repeating: "x", count: 70 * 1024) + "\""

    /// Every refused registration names the field and the fake store records no write.
    @Test(arguments: [
        ("wrong type", #"{"platform":"apns","handle":42,"tags":["World"]}"#, "handle", "invalid_type"),
        ("tags not strings", #"{"platform":"apns","handle":"\#(Fixture.apnsToken)","tags":["World",7]}"#, "tags[1]", "invalid_type"),
        ("unknown platform", #"{"platform":"nokia","handle":"abc","tags":[]}"#, "platform", "unknown_platform"),
        ("70 KB template", Fixture.registration(template: hugeTemplate), "template.body", "template_too_large"),
        ("invalid tag characters", Fixture.registration(tags: ["World", "bad tag!"]), "tags[1]", "invalid_tag"),
        (
            "bad template", Fixture.registration(template: #""{\"aps\":{\"alert\":\"$(News_English\"}}""#), "template.body",
            "invalid_template"
        ),
        ("bad handle", Fixture.registration(handle: "not-hex"), "handle", "invalid_handle"),
        ("malformed JSON", "{\"platform\": \"apns\",\n \"handle\": }", "", "malformed_json"),
        ("not an object", "[1,2]", "", "invalid_type"),
    ])
    func registrationBodiesAreRefused(_ name: String, body: String, field: String, issueCode: String) async throws {
        let hub = TestHub()
        let id = hub.registry.issueRegistrationId()
        try await hub.run { client async throws in
            let response = try await client.call(.put, "/v1/registrations/\(id)", TestHub.manage, body: body)
            #expect(response.status == .badRequest)
            #expect(response.issueFields.contains(field), "\(response.text)")
            let json = try response.json()
            let codes = json["error"]?["issues"]?.arrayValue?.compactMap { $0["code"]?.stringValue } ?? []
            #expect(codes.contains(issueCode))
        }
        #expect(hub.registry.writes == 0)
    }

    @Test func malformedJSONSaysWhere() async throws {
        let hub = TestHub()
        let id = hub.registry.issueRegistrationId()
        try await hub.run { client async throws in
            let response = try await client.call(
                .put, "/v1/registrations/\(id)", TestHub.manage, body: "{\"platform\": \"apns\",\n \"handle\": }")
            #expect(response.text.contains("line 2"))
            #expect(response.text.contains("column"))
        }
    }

    @Test func everyIssueIsListedNotJustTheFirst() async throws {
        let hub = TestHub()
        let id = hub.registry.issueRegistrationId()
        try await hub.run { client async throws in
            let response = try await client.call(
                .put, "/v1/registrations/\(id)", TestHub.manage,
                body: #"{"platform":"apns","handle":"zz","tags":["ok","no way"],"expiresAt":"soon"}"#)
            #expect(response.status == .badRequest)
            #expect(Set(response.issueFields).isSuperset(of: ["handle", "tags[1]", "expiresAt"]))
        }
    }

    @Test(arguments: [
        (
            "70 KB template", #"{"platform":"apns","pushChannel":"\#(Fixture.apnsToken)","templates":{"big":{"body":\#(hugeTemplate)}}}"#,
            "templates.big.body"
        ),
        ("unknown platform", #"{"platform":"blackberry","pushChannel":"x"}"#, "platform"),
        ("wrong type", #"{"platform":"apns","pushChannel":"\#(Fixture.apnsToken)","tags":"World"}"#, "tags"),
        (
            "invalid template tag",
            #"{"platform":"apns","pushChannel":"\#(Fixture.apnsToken)","templates":{"t":{"body":"{}","tags":["a b"]}}}"#,
            "templates.t.tags[0]"
        ),
    ])
    func installationBodiesAreRefused(_ name: String, body: String, field: String) async throws {
        let hub = TestHub()
        try await hub.run { client async throws in
            let response = try await client.call(.put, "/v1/installations/i1", TestHub.manage, body: body)
            #expect(response.status == .badRequest)
            #expect(response.issueFields.contains(field), "\(response.text)")
        }
        #expect(hub.registry.writes == 0)
    }

    @Test(arguments: [
        ("empty tags", #"{"tags":"","properties":{"a":"b"}}"#, "tags"),
        ("empty tag list", #"{"tags":[]}"#, "tags"),
        ("invalid expression", #"{"tags":"(World || Politics"}"#, "tags"),
        ("wrong type", #"{"tags":"World","priority":5}"#, "priority"),
        ("unknown native platform", #"{"tags":"World","native":{"nokia":{}}}"#, "native.nokia"),
    ])
    func notificationBodiesAreRefused(_ name: String, body: String, field: String) async throws {
        let hub = TestHub()
        try await hub.run { client async throws in
            let response = try await client.call(.post, "/v1/notifications", TestHub.send, body: body)
            #expect(response.status == .badRequest)
            #expect(response.issueFields.contains(field), "\(response.text)")
        }
        #expect(hub.publisher.count == 0)
    }

    @Test func bodiesOverTheRequestLimitAreRefused() async throws {
        var hub = TestHub()
        hub.limits.maxRequestBytes = 1_024
        let id = hub.registry.issueRegistrationId()
        try await hub.run { client async throws in
            let response = try await client.call(
                .put, "/v1/registrations/\(id)", TestHub.manage,
                body: Fixture.registration(template: "\"" + String(repeating: "y", count: 2_000) + "\""))
            #expect(response.status == .contentTooLarge)
            #expect(response.errorCode == "request_too_large")
        }
        #expect(hub.registry.writes == 0)
    }

    @Test("a notification the pipeline could not carry is refused at the door with 413, over the event limit or the body limit")
    func oversizeNotificationsAreRefused() async throws {
        let hub = TestHub()
        @Sendable func event(_ size: Int) -> String {
            #"{"tags":"World","properties":{"News_English":""# + String(repeating: "x", count: size) + #""}}"#
        }
        try await hub.run { client async throws in
            let overEvent = try await client.call(.post, "/v1/notifications", TestHub.send, body: event(300_000))
            #expect(overEvent.status == .contentTooLarge)
            #expect(try overEvent.json()["error"]?["message"]?.stringValue?.contains("262144") == true)
            let overBody = try await client.call(.post, "/v1/notifications", TestHub.send, body: event(600_000))
            #expect(overBody.status == .contentTooLarge)
            let fits = try await client.call(.post, "/v1/notifications", TestHub.send, body: event(200_000))
            #expect(fits.status == .accepted)
        }
        #expect(hub.publisher.count == 1)
    }
}
