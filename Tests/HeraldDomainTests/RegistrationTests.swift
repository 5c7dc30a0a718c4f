import Foundation
@testable import HeraldDomain
import Testing

@Suite("Registrations")
struct RegistrationTests {
    static let newsBody = #"{"aps":{"alert":"$(News_French)"},"inAppMessage":"$(News_French)"}"#

    static func document(_ members: [String: String]) -> String {
        var fields: [String: String] = [
            "registrationId": #""7f3c2a""#,
            "platform": #""apns""#,
            "handle": "\"\(ModelFixtures.apnsToken)\"",
            "tags": #"["World", "Science", "$UserId:{alice}"]"#,
            "template":
                #"{"name": "newsTemplate", "body": "{\"aps\":{\"alert\":\"$(News_French)\"}}", "headers": {"apns-push-type": "alert"}}"#,
            "version": "3",
        ]
        for (key, value) in members { fields[key] = value }
        return "{"
            + fields.sorted { $0.key < $1.key }.compactMap { key, value in
                value.isEmpty ? nil : "\"\(key)\": \(value)"
            }.joined(separator: ", ") + "}"
    }

    @Test("the contract example decodes with Codable and re-encodes to the same document")
    func contractExample() throws {
        let registration = try JSONDecoder().decode(Registration.self, from: Data(ModelFixtures.contractRegistration.utf8))
        #expect(registration.registrationId == "7f3c2a")
        #expect(registration.platform == .apns)
        #expect(registration.handle == "a1b2c3...")
        #expect(registration.tags == ["World", "Science", "$UserId:{alice}"])
        #expect(
            registration.template
                == RegistrationTemplate(
                    name: "newsTemplate", body: Self.newsBody, headers: ["apns-push-type": "alert"], expiry: "$(expiresAt)"
                ))
        #expect(registration.expiresAt == nil)
        #expect(registration.version == 3)
        #expect(
            String(decoding: registration.jsonBytes(), as: UTF8.self) == (try ModelFixtures.minified(ModelFixtures.contractRegistration)))

        let viaEncoder = try JSONDecoder().decode(Registration.self, from: JSONEncoder().encode(registration))
        #expect(viaEncoder == registration)
    }

    @Test("the contract example passes validation once its handle is a real token")
    func contractExampleValidates() throws {
        let text = ModelFixtures.contractRegistration.replacingOccurrences(of: "a1b2c3...", with: ModelFixtures.apnsToken)
        let registration = try Registration.decode(ModelFixtures.bytes(text))
        #expect(registration.validate().isEmpty)
        #expect(registration.deliveryTemplateName == "newsTemplate")
        #expect(try Registration.decode(registration.jsonBytes()) == registration)
    }

    @Test(
        "every problem is reported with its field path",
        arguments: [
            (["platform": #""blackberry""#], [("platform", "unknown_platform")]),
            (["tags": #""World""#], [("tags", "invalid_type")]),
            (["tags": #"["World", 7, "bad tag!"]"#], [("tags[1]", "invalid_type")]),
            (["tags": #"["World", "bad tag!", "ok"]"#], [("tags[1]", "invalid_tag")]),
            (["version": #""3""#], [("version", "invalid_type")]),
            (["version": "-1"], [("version", "invalid_value")]),
            (["handle": ""], [("handle", "missing_field")]),
            (["handle": #""a1b2c3...""#], [("handle", "invalid_handle")]),
            (["registrationId": #""has/slash""#], [("registrationId", "invalid_identifier")]),
            (["registrationId": ""], [("registrationId", "missing_field")]),
            (["template": #""newsTemplate""#], [("template", "invalid_type")]),
            (["template": #"{"name": "n", "body": 5}"#], [("template.body", "invalid_type")]),
            (["template": #"{"body": "{}"}"#], [("template.name", "missing_field")]),
            (["template": #"{"name": "$bad", "body": "{}"}"#], [("template.name", "invalid_identifier")]),
            (["template": #"{"name": "n", "body": "{\"a\": \"$(x\"}"}"#], [("template.body", "invalid_template")]),
            (
                ["template": #"{"name": "n", "body": "{}", "headers": {"bad name": "x", "ok": "$(y"}}"#],
                [("template.headers.bad name", "invalid_header"), ("template.headers.ok", "invalid_template")]
            ),
            (["template": #"{"name": "n", "body": "{}", "headers": {"h": 1}}"#], [("template.headers.h", "invalid_type")]),
            (
                ["template": #"{"name": "n", "body": "{}", "headers": {"apns-push-type": "a\r\nx-evil: 1", "b": "background\u0000"}}"#],
                [("template.headers.apns-push-type", "invalid_header"), ("template.headers.b", "invalid_header")]
            ),
            (
                ["template": #"{"name": "n", "body": "{}", "headers": {"h": "v\n\nGET / HTTP/1.1"}, "expiry": "1\r2"}"#],
                [("template.headers.h", "invalid_header"), ("template.expiry", "invalid_template")]
            ),
            (["template": #"{"name": "n", "body": "{}", "expiry": "$(expiresAt"}"#], [("template.expiry", "invalid_template")]),
            (["expiresAt": #""next week""#], [("expiresAt", "invalid_timestamp")]),
            (
                ["tag": #"["World"]"#, "template": #"{"name": "news", "body": "{}", "tags": ["x"]}"#],
                [("tag", "unknown_field"), ("template.tags", "unknown_field")]
            ),
            (
                ["platform": #""blackberry""#, "tags": #"["a b"]"#, "version": "true"],
                [("platform", "unknown_platform"), ("tags[0]", "invalid_tag"), ("version", "invalid_type")]
            ),
        ])
    func issues(members: [String: String], expected: [(String, String)]) {
        let issues = ModelFixtures.issues { () throws(ValidationFailure) in
            try Registration.decode(ModelFixtures.bytes(Self.document(members)))
        }
        #expect(issues.map(\.field).sorted() == expected.map(\.0).sorted(), "\(issues)")
        #expect(issues.map(\.code).sorted() == expected.map(\.1).sorted(), "\(issues)")
    }

    @Test("header templates that add up past the header block limit are refused as a whole, naming the limit")
    func headerBlockLimit() throws {
        let value = String(repeating: "v", count: 4_000)
        let headers = Dictionary(uniqueKeysWithValues: (0..<2).map { ("apns-x-\($0)", value) })
        let registration = Registration(
            registrationId: "r1", platform: .apns, handle: ModelFixtures.apnsToken,
            template: RegistrationTemplate(name: "news", body: "{}", headers: headers)
        )
        let issue = try #require(registration.validate().first)
        #expect(issue.field == "template.headers")
        #expect(issue.code == "invalid_header")
        #expect(issue.message.contains("the limit is 4096"), "\(issue.message)")
        var one = registration
        one.template?.headers = ["apns-x-0": value]
        #expect(one.validate().isEmpty)
    }

    @Test("a template error names its line and column")
    func templateErrorPosition() throws {
        let body = "{\n  \"aps\": {\"alert\": \"$(News_French\"}\n}"
        let registration = Registration(
            registrationId: "r1", platform: .apns, handle: ModelFixtures.apnsToken,
            template: RegistrationTemplate(name: "news", body: body)
        )
        let issue = try #require(registration.validate().first)
        #expect(issue.field == "template.body")
        #expect(issue.code == "invalid_template")
        #expect(issue.message.contains("line 2, column"), "\(issue.message)")
    }

    @Test("a WNS template is compiled as XML")
    func wnsTemplateIsXML() {
        let toast = #"<toast><visual><binding template="ToastText01"><text id="1">$(News_English)</text></binding></visual></toast>"#
        var registration = Registration(
            registrationId: "w1", platform: .wns, handle: ModelFixtures.wnsChannel,
            template: RegistrationTemplate(name: "toast", body: toast, headers: ["X-WNS-Type": "wns/toast"])
        )
        #expect(registration.validate().isEmpty)
        registration.platform = .fcm
        #expect(registration.validate().map(\.code) == ["invalid_handle", "invalid_template"])
    }

    @Test("a 70 KB template body is refused with its size")
    func oversizedTemplate() throws {
        let body = #"{"aps":{"alert":""# + String(repeating: "x", count: 70_000) + #""}}"#
        let registration = Registration(
            registrationId: "r1", platform: .apns, handle: ModelFixtures.apnsToken,
            template: RegistrationTemplate(name: "big", body: body)
        )
        let issues = registration.validate()
        #expect(issues.count == 1)
        #expect(issues.first?.field == "template.body")
        #expect(issues.first?.code == "template_too_large")
        #expect(issues.first?.message.contains("65536") == true)
    }

    @Test("the tag count limit defaults to 1,000 and is configurable")
    func tagLimit() {
        var registration = Registration(
            registrationId: "r1", platform: .apns, handle: ModelFixtures.apnsToken, tags: (0..<1_000).map { "t\($0)" })
        #expect(registration.validate().isEmpty)
        registration.tags.append("one_more")
        #expect(registration.validate().map(\.code) == ["too_many_tags"])
        #expect(registration.validate(limits: RegistrationLimits(maxTags: 2_000)).isEmpty)
    }

    @Test("malformed JSON and non-objects are refused with a position")
    func malformed() {
        let malformed = ModelFixtures.issues { () throws(ValidationFailure) in
            try Registration.decode(ModelFixtures.bytes(#"{"registrationId": "r1",, }"#))
        }
        #expect(malformed.map(\.code) == ["malformed_json"])
        #expect(malformed.first?.message.contains("line 1, column 25") == true, "\(malformed)")
        let array = ModelFixtures.issues { () throws(ValidationFailure) in try Registration.decode(ModelFixtures.bytes("[]")) }
        #expect(array.map(\.code) == ["invalid_type"])
    }

    @Test("the id from the URL fills in or must match the body")
    func idFromURL() throws {
        let withoutId = Self.document(["registrationId": ""])
        #expect(try Registration.decode(ModelFixtures.bytes(withoutId), registrationId: "r9").registrationId == "r9")
        let mismatch = ModelFixtures.issues { () throws(ValidationFailure) in
            try Registration.decode(ModelFixtures.bytes(Self.document([:])), registrationId: "other")
        }
        #expect(mismatch.map(\.field) == ["registrationId"])
    }
}

@Suite("Per-platform handle validation")
struct HandleValidationTests {
    @Test(
        "accepts real-looking handles",
        arguments: [
            (Platform.apns, ModelFixtures.apnsToken),
            (.apns, String(repeating: "AB", count: 32)),
            (.apns, String(repeating: "0f", count: 100)),
            (.fcm, ModelFixtures.fcmToken),
            (.fcm, "cX2b_Ew-Rz8:APA91bE" + String(repeating: "x", count: 140)),
            (.wns, ModelFixtures.wnsChannel),
            (.wns, "https://wns2-by3p.notify.windows.com/w/?token=BQYAAAD"),
            (.webpush, ModelFixtures.webPushHandle),
            (.webpush, "https://updates.push.services.mozilla.com/wpush/v2/gAAAAABf#" + ModelFixtures.webPushKeys),
            // Padding and the standard alphabet, as some libraries write them.
            (
                .webpush,
                "https://push.example:8443/x#auth=BTBZMqHH6r4Tts7J/aSIgg==&p256dh=BCVxsr7N/eNgVRqvHtD0zTZsEc6+VV+JvLexhqUzORcxaOzi6+AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4="
            ),
        ])
    func accepts(platform: Platform, handle: String) {
        #expect(platform.handleProblem(handle) == nil)
    }

    @Test(
        "refuses with a message that says why",
        arguments: [
            (Platform.apns, "a1b2c3...", "hexadecimal"),
            (.apns, String(repeating: "a", count: 63), "63"),
            (.apns, String(repeating: "a", count: 65), "even number"),
            (.apns, String(repeating: "ab", count: 101), "202"),
            (.apns, "zz" + String(repeating: "a", count: 62), "'z' at position 1"),
            (.apns, "", "0"),
            (.fcm, "short", "this one has 5"),
            (.fcm, String(repeating: "a", count: 40) + " " + String(repeating: "b", count: 40), "a space at position 41"),
            (.fcm, String(repeating: "a", count: 40) + "/", "'/' at position 41"),
            (.fcm, String(repeating: "a", count: 1025), "1025"),
            (.wns, "http://db5.notify.windows.com/?token=x", "https"),
            (.wns, "https://notify.windows.com.evil.example/?token=x", "notify.windows.com"),
            (.wns, "https://example.com/?token=x", "\"example.com\""),
            (.wns, "db5.notify.windows.com", "absolute https URL"),
            (.webpush, "http://push.example/abc", "https"),
            (.webpush, "not a url", "absolute https URL"),
            (.webpush, "https://" + String(repeating: "a", count: 4100), "at most 4096"),
            (.webpush, ModelFixtures.webPushEndpoint, "carries the subscription's keys"),
            (.webpush, ModelFixtures.webPushEndpoint + "#p256dh=BCVxsr7N", "no auth"),
            (.webpush, ModelFixtures.webPushEndpoint + "#auth=BTBZMqHH6r4Tts7J_aSIgg", "no p256dh"),
            (.webpush, ModelFixtures.webPushEndpoint + "#p256dh=AAAA&auth=BTBZMqHH6r4Tts7J_aSIgg", "this one has 3 bytes"),
            (
                .webpush,
                ModelFixtures.webPushEndpoint
                    + "#p256dh=BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4&auth=AAAA",
                "this one has 3"
            ),
            (.webpush, ModelFixtures.webPushEndpoint + "#" + ModelFixtures.webPushKeys + "&x=1", "only p256dh and auth"),
            (.webpush, ModelFixtures.webPushEndpoint + "#p256dh=!!&auth=BTBZMqHH6r4Tts7J_aSIgg", "not base64url"),
        ])
    func refuses(platform: Platform, handle: String, messagePart: String) throws {
        let message = try #require(platform.handleProblem(handle))
        #expect(message.contains(messagePart), "\(message)")
    }

    @Test("an invalid handle is an invalid_handle issue at the given field")
    func issueShape() {
        let issue = Platform.apns.handleIssue("xyz", field: "pushChannel")
        #expect(issue?.field == "pushChannel")
        #expect(issue?.code == "invalid_handle")
    }
}
