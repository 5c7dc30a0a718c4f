import Foundation
@testable import HeraldDomain
import Testing

@Suite("Events")
struct EventDecodingTests {
    static func decode(_ text: String, limits: EventLimits = .default) throws(ValidationFailure) -> NotificationEvent {
        try NotificationEvent.decode(ModelFixtures.bytes(text), limits: limits)
    }

    static func issues(_ text: String, limits: EventLimits = .default) -> [ValidationIssue] {
        ModelFixtures.issues { () throws(ValidationFailure) in try decode(text, limits: limits) }
    }

    @Test("the contract example decodes")
    func contractExample() throws {
        let event = try Self.decode(ModelFixtures.contractEvent)
        #expect(event.id == "bn-2026-11-21-0001")
        #expect(
            event.audience
                == .expression(try TagExpression.parse("(World || Politics) && !Sports"), source: "(World || Politics) && !Sports"))
        #expect(event.audience.matches(["World"]))
        #expect(!event.audience.matches(["World", "Sports"]))
        #expect(event.properties == ["News_English": "Summit ends", "News_French": "Fin du sommet", "News_Mandarin": "峰会结束"])
        #expect(event.native == [.apns: #"{"aps":{"alert":"Summit ends","category":"NEWS_CATEGORY"}}"#])
        #expect(event.templates == ["newsTemplate"])
        #expect(event.includesTemplate(named: "newsTemplate"))
        #expect(!event.includesTemplate(named: "other"))
        #expect(event.expiresAt == ModelFixtures.date("2026-11-21T19:00:00Z"))
        #expect(event.priority == .high)
        #expect(event.collapseId == "summit")
        #expect(event.publishedAt == nil)
    }

    @Test("canonical JSON and Codable both decode back to the same event")
    func reencodes() throws {
        var event = try Self.decode(ModelFixtures.contractEvent)
        event.publishedAt = ModelFixtures.date("2026-11-21T18:00:00.120Z")
        let canonical = event.canonicalJSON()
        #expect(try NotificationEvent.decode(canonical) == event)
        #expect(
            String(decoding: canonical, as: UTF8.self).hasPrefix(
                #"{"id":"bn-2026-11-21-0001","tags":"(World || Politics) && !Sports","properties":{"#))

        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let viaCodable = try JSONDecoder().decode(NotificationEvent.self, from: encoder.encode(event))
        #expect(viaCodable == event)
    }

    @Test("absent or null tags broadcast; a list means any of its tags")
    func audiences() throws {
        #expect(try Self.decode("{}").audience == .broadcast)
        #expect(try Self.decode(#"{"tags": null}"#).audience == .broadcast)
        let list = try Self.decode(#"{"tags": ["Sports", "World"]}"#).audience
        #expect(list.matches(["World"]))
        #expect(!list.matches(["Science"]))
        if case .expression(_, let source) = list { #expect(source == "Sports || World") } else { Issue.record("not an expression") }
        #expect(try Self.decode(#"{"tags": "$UserId:{alice}"}"#).audience.matches(["$UserId:{alice}"]))
    }

    @Test("properties keep strings and the JSON text of numbers and booleans")
    func properties() throws {
        let event = try Self.decode(#"{"properties": {"title": "Hi \"you\"", "count": 3, "ratio": -1.50, "breaking": true, "gone": null}}"#)
        #expect(event.properties == ["title": #"Hi "you""#, "count": "3", "ratio": "-1.50", "breaking": "true"])
    }

    @Test("a WNS native payload may be XML text; other platforms need objects")
    func nativePayloads() throws {
        let event = try Self.decode(#"{"native": {"wns": "<toast><visual/></toast>", "fcm": {"message": {"data": {"k": "v"}}}}}"#)
        #expect(event.native[.wns] == "<toast><visual/></toast>")
        #expect(event.native[.fcm] == #"{"message":{"data":{"k":"v"}}}"#)
        #expect(Self.issues(#"{"native": {"apns": "text"}}"#).map(\.field) == ["native.apns"])
    }

    @Test("a native WNS payload must be well-formed XML, and every native payload must fit its platform")
    func nativePayloadChecks() {
        let malformed = Self.issues(#"{"native": {"wns": "<toast><unclosed>"}}"#)
        #expect(malformed.map(\.field) == ["native.wns"])
        #expect(malformed.first?.message.contains("not well-formed XML") == true, "\(malformed)")
        let alert = String(repeating: "a", count: 10_000)
        let oversize = Self.issues(#"{"native": {"apns": {"aps": {"alert": "\#(alert)"}}}}"#)
        #expect(oversize.map(\.code) == ["payload_too_large"])
        #expect(oversize.first?.message.contains("apns payload limit is 4096") == true, "\(oversize)")
        var roomy = EventLimits.default
        roomy.payloadLimits.apns = 16_384
        #expect(Self.issues(#"{"native": {"apns": {"aps": {"alert": "\#(alert)"}}}}"#, limits: roomy).isEmpty)
    }

    @Test(
        "every problem is reported with its field path",
        arguments: [
            (#"{"tags": ""}"#, [("tags", "empty_tags")]),
            (#"{"tags": "World", "dryRun": true, "Priority": "high"}"#, [("dryRun", "unknown_field"), ("Priority", "unknown_field")]),
            (#"{"tags": "   "}"#, [("tags", "empty_tags")]),
            (#"{"tags": []}"#, [("tags", "empty_tags")]),
            (#"{"tags": 5}"#, [("tags", "invalid_type")]),
            (#"{"tags": ["ok", 1, "bad tag"]}"#, [("tags[1]", "invalid_type"), ("tags[2]", "invalid_tag")]),
            (#"{"tags": "(World || "}"#, [("tags", "invalid_tag_expression")]),
            (#"{"id": 12}"#, [("id", "invalid_type")]),
            (#"{"id": "a/b"}"#, [("id", "invalid_identifier")]),
            (#"{"properties": []}"#, [("properties", "invalid_type")]),
            (#"{"properties": {"a": {"b": "c"}, "d": [1]}}"#, [("properties.a", "invalid_type"), ("properties.d", "invalid_type")]),
            (#"{"properties": {"Title": "a", "title": "b"}}"#, [("properties.title", "duplicate_property")]),
            (#"{"native": {"blackberry": {}}}"#, [("native.blackberry", "unknown_platform")]),
            (#"{"native": "x"}"#, [("native", "invalid_type")]),
            (#"{"templates": []}"#, [("templates", "invalid_value")]),
            (#"{"templates": ["ok", 3]}"#, [("templates[1]", "invalid_type")]),
            (#"{"templates": ["a b"]}"#, [("templates[0]", "invalid_identifier")]),
            (#"{"expiresAt": "tomorrow"}"#, [("expiresAt", "invalid_timestamp")]),
            (#"{"expiresAt": 1700000000}"#, [("expiresAt", "invalid_type")]),
            (#"{"publishedAt": "2026-11-21"}"#, [("publishedAt", "invalid_timestamp")]),
            (#"{"priority": "urgent"}"#, [("priority", "invalid_value")]),
            (#"{"collapseId": ""}"#, [("collapseId", "invalid_value")]),
            (#"{"collapseId": "a\r\nx-evil: 1"}"#, [("collapseId", "invalid_value")]),
            (#"{"collapseId": "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}"#, [("collapseId", "invalid_value")]),
            (
                #"{"tags": "", "priority": 1, "native": {"apns": [], "sms": {}}}"#,
                [("tags", "empty_tags"), ("priority", "invalid_type"), ("native.apns", "invalid_type"), ("native.sms", "unknown_platform")]
            ),
            (#"{"tags": "a" "#, [("", "malformed_json")]),
            (#"[1, 2]"#, [("", "invalid_type")]),
        ])
    func issues(text: String, expected: [(String, String)]) {
        let issues = Self.issues(text)
        #expect(issues.map { "\($0.field) \($0.code)" }.sorted() == expected.map { "\($0.0) \($0.1)" }.sorted(), "\(issues)")
    }

    @Test("an invalid expression names its column")
    func expressionColumn() throws {
        let issue = try #require(Self.issues(#"{"tags": "(World || "}"#).first)
        #expect(issue.message.contains("column 11"), "\(issue.message)")
    }

    @Test("malformed JSON names line and column")
    func malformedPosition() throws {
        let issue = try #require(Self.issues("{\n  \"tags\": \"World\",\n  \"priority\": high\n}").first)
        #expect(issue.code == "malformed_json")
        #expect(issue.message.contains("line 3, column 15"), "\(issue.message)")
    }

    @Test("an event over the size limit is refused before parsing")
    func oversized() {
        let big = #"{"properties": {"p": ""# + String(repeating: "x", count: 1_048_576) + #""}}"#
        let issues = Self.issues(big)
        #expect(issues.map(\.code) == ["too_large"])
        #expect(Self.issues(big, limits: EventLimits(maxBytes: 2_000_000)).isEmpty)
    }

    @Test("Azure-compatible expression limits apply when configured")
    func azureLimits() {
        let sevenTags = #"{"tags": "a && b && c && d && e && f && g"}"#
        #expect(Self.issues(sevenTags).isEmpty)
        let limits = EventLimits(tagExpression: .azure)
        #expect(Self.issues(sevenTags, limits: limits).map(\.code) == ["invalid_tag_expression"])
    }
}

@Suite("Fan-out tasks")
struct ModelFanoutTaskTests {
    @Test("a task with its embedded event survives JSON")
    func roundTrip() throws {
        let event = try NotificationEvent.decode(ModelFixtures.bytes(ModelFixtures.contractEvent))
        let task = FanoutTask(
            eventId: "bn-2026-11-21-0001", taskIndex: 3, taskCount: 8, slots: 96..<128,
            event: event, plannedAt: ModelFixtures.date("2026-11-21T18:00:00.125Z")
        )
        let data = try JSONEncoder().encode(task)
        let decoded = try JSONDecoder().decode(FanoutTask.self, from: data)
        #expect(decoded == task)
        #expect(decoded.slots == 96..<128)
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains(#""plannedAt":"2026-11-21T18:00:00.125Z""#))
        #expect(text.contains(#""slotLower":96"#))
    }

    @Test("a broadcast event has no tags field")
    func broadcast() throws {
        let task = FanoutTask(
            eventId: "e", taskIndex: 0, taskCount: 1, slots: 0..<256, event: NotificationEvent(id: "e"),
            plannedAt: Date(timeIntervalSince1970: 0))
        let data = try JSONEncoder().encode(task)
        #expect(!String(decoding: data, as: UTF8.self).contains("tags"))
        #expect(try JSONDecoder().decode(FanoutTask.self, from: data).event.audience == .broadcast)
    }

    @Test("the task copy is read by the event's own reader: limits wider than the defaults pass, a broken copy names its field")
    func trustedCopies() throws {
        // Accepted at the door of a deployment configured with a 16 KB APNs limit.
        let wide = "{\"tags\":\"a\",\"native\":{\"apns\":{\"aps\":{\"alert\":\"\(String(repeating: "x", count: 10_000))\"}}}}"
        let limits = EventLimits(payloadLimits: PayloadLimits(apns: 16_384))
        let event = try NotificationEvent.decode(Array(wide.utf8), limits: limits)
        #expect(throws: ValidationFailure.self) { try NotificationEvent.decode(Array(wide.utf8)) }
        let task = FanoutTask(
            eventId: "e", taskIndex: 0, taskCount: 1, slots: 0..<256, event: event, plannedAt: Date(timeIntervalSince1970: 0))
        #expect(try JSONDecoder().decode(FanoutTask.self, from: JSONEncoder().encode(task)) == task)

        let encoded = String(decoding: try JSONEncoder().encode(task), as: UTF8.self)
        let broken = Data(encoded.replacingOccurrences(of: "\"apns\"", with: "\"blackberry\"").utf8)
        #expect {
            try JSONDecoder().decode(FanoutTask.self, from: broken)
        } throws: { error in
            "\(error)".contains("native.blackberry")
        }
    }
}
