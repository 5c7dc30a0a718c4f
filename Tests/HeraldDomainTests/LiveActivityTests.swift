import Foundation
import Testing

@testable import HeraldDomain

/// Live Activities: APNs tokens of their own kind on registrations, and events that update,
/// end or start activities.
struct LiveActivityTests {
    static let update = #"""
        {"id": "match-1", "tags": "Match_ARS_CHE", "liveActivity": {"event": "update",
         "contentState": {"home": 1, "away": 0, "minute": 89}, "staleDate": "2026-11-29T20:00:00Z",
         "alert": {"title": "Goal!", "body": "1-0 in the 89th minute"}, "relevanceScore": 75}}
        """#

    @Test("an update event reads, writes back the same, and makes the APNs liveactivity payload")
    func updateEvent() throws {
        let event = try NotificationEvent.decode(Array(Self.update.utf8))
        let update = try #require(event.liveActivity)
        #expect(update.event == .update && update.tokenKind == .liveActivity)
        #expect(try NotificationEvent.decode(event.canonicalJSON()) == event)
        let payload = String(decoding: update.payload(timestamp: Date(timeIntervalSince1970: 1_795_900_000.6)), as: UTF8.self)
        #expect(
            payload
                == #"{"aps":{"timestamp":1795900000,"event":"update","content-state":{"home":1,"away":0,"minute":89},"stale-date":1795982400,"alert":{"title":"Goal!","body":"1-0 in the 89th minute"},"relevance-score":75}}"#
        )
    }

    @Test("a start goes to push-to-start tokens and names its attributes; an end may say when to dismiss")
    func startAndEnd() throws {
        let start = try NotificationEvent.decode(
            Array(
                #"{"tags": "Follows_ARS", "liveActivity": {"event": "start", "contentState": {"home": 0, "away": 0}, "attributesType": "MatchAttributes", "attributes": {"home": "ARS", "away": "CHE"}, "alert": {"title": "Kick-off"}}}"#
                    .utf8))
        #expect(start.liveActivity?.tokenKind == .pushToStart)
        let payload = String(decoding: try #require(start.liveActivity).payload(timestamp: Date(timeIntervalSince1970: 10)), as: UTF8.self)
        #expect(payload.contains(#""attributes-type":"MatchAttributes","attributes":{"home":"ARS","away":"CHE"}"#))
        let end = try NotificationEvent.decode(
            Array(
                #"{"liveActivity": {"event": "end", "contentState": {"home": 2, "away": 1}, "dismissalDate": "2026-11-29T21:00:00Z"}}"#.utf8
            ))
        #expect(end.liveActivity?.dismissalDate != nil && end.liveActivity?.tokenKind == .liveActivity)
    }

    @Test(
        "what APNs would refuse is refused with the member named",
        arguments: [
            (#"{"event": "pause", "contentState": {}}"#, "liveActivity.event invalid_value"),
            (#"{"event": "update"}"#, "liveActivity.contentState missing_field"),
            (#"{"event": "update", "contentState": [1]}"#, "liveActivity.contentState invalid_value"),
            (#"{"event": "start", "contentState": {}, "attributes": {}, "alert": {}}"#, "liveActivity.attributesType missing_field"),
            (#"{"event": "update", "contentState": {}, "attributesType": "T"}"#, "liveActivity.attributesType invalid_value"),
            (
                #"{"event": "update", "contentState": {}, "dismissalDate": "2026-11-29T21:00:00Z"}"#,
                "liveActivity.dismissalDate invalid_value"
            ),
            (#"{"event": "update", "contentState": {}, "score": 1}"#, "liveActivity.score unknown_field"),
        ])
    func refused(member: String, expected: String) {
        let issues = ModelFixtures.issues { () throws(ValidationFailure) in
            try NotificationEvent.decode(Array(#"{"liveActivity": \#(member)}"#.utf8))
        }
        #expect(issues.map { "\($0.field) \($0.code)" } == [expected], "\(issues)")
    }

    @Test("a registration holds a Live Activity or push-to-start token: APNs only, without a template, written back as read")
    func registrations() throws {
        let text =
            #"{"registrationId": "la1", "platform": "apns", "handle": "\#(ModelFixtures.apnsToken)", "tags": ["Match_ARS_CHE"], "tokenKind": "liveActivity"}"#
        let registration = try Registration.decode(ModelFixtures.bytes(text))
        #expect(registration.tokenKind == .liveActivity && registration.deliveryTemplateName == "$liveActivity")
        #expect(String(decoding: registration.jsonBytes(), as: UTF8.self).contains(#""tokenKind":"liveActivity""#))
        #expect(try Registration.decode(registration.jsonBytes()) == registration)
        #expect(try JSONDecoder().decode(Registration.self, from: JSONEncoder().encode(registration)) == registration)
        let device = try Registration.decode(
            ModelFixtures.bytes(text.replacingOccurrences(of: #", "tokenKind": "liveActivity""#, with: "")))
        #expect(!String(decoding: device.jsonBytes(), as: UTF8.self).contains("tokenKind"))

        for (document, field) in [
            (text.replacingOccurrences(of: "liveActivity", with: "widget"), "tokenKind"),
            (
                #"{"registrationId": "la1", "platform": "fcm", "handle": "\#(ModelFixtures.fcmToken)", "tokenKind": "pushToStart"}"#,
                "tokenKind"
            ),
            (text.replacingOccurrences(of: #""tokenKind""#, with: #""template": {"name": "t", "body": "{}"}, "tokenKind""#), "template"),
        ] {
            let issues = ModelFixtures.issues { () throws(ValidationFailure) in try Registration.decode(ModelFixtures.bytes(document)) }
            #expect(issues.map(\.field) == [field], "\(issues)")
        }
    }
}
