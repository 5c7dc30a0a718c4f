import Foundation
import Testing
@testable import HeraldDomain

@Suite("Direct sends: handles without registrations")
struct DirectSendDomainTests {
    static let token = String(repeating: "ab", count: 32)

    static func decode(_ text: String) throws(ValidationFailure) -> NotificationEvent {
        try NotificationEvent.decode(ModelFixtures.bytes(text))
    }

    @Test("direct reads each platform's handles, once each, and survives canonical JSON (as inside a fan-out task)")
    func readsHandles() throws {
        let event = try Self.decode(
            #"{"id":"dx-1","direct":[{"platform":"apns","handle":"\#(Self.token)"},{"handle":"\#(Self.token)","platform":"apns"},"#
                + #"{"platform":"fcm","handle":"fcm-token-0000000000000000000000001"}],"#
                + #""native":{"apns":{"aps":{"alert":"a"}},"fcm":{"message":{"data":{"a":"1"}}}},"sendAt":"2030-01-01T00:00:00Z"}"#)
        #expect(
            event.direct == [
                DirectTarget(platform: .apns, handle: Self.token),
                DirectTarget(platform: .fcm, handle: "fcm-token-0000000000000000000000001"),
            ])
        #expect(event.audience == .broadcast)
        #expect(try NotificationEvent.decode(event.canonicalJSON()) == event)
        #expect(try JSONDecoder().decode(NotificationEvent.self, from: JSONEncoder().encode(event)) == event)
        #expect(DirectTarget.registrationId(position: 3) == "$direct:3")
        #expect(DirectTarget.isStandIn("$direct:3") && !DirectTarget.isStandIn("direct-3"))
        // No registration can carry a stand-in's id.
        #expect(IdentifierRules.registrationIdProblem(DirectTarget.registrationId(position: 0)) != nil)
    }

    static let apnsTarget = #"[{"platform":"apns","handle":"\#(token)"}]"#
    static let apnsNative = #""native":{"apns":{"aps":{"alert":"a"}}}"#

    @Test(
        "a bad direct send is refused naming the field: empty, over 1,000, not objects, a bad handle, no native payload for its platform, and what does not apply to it",
        arguments: [
            (#""direct":[],\#(apnsNative)"#, "direct", "empty list"),
            (
                #""direct":[\#((0...1_000).map { _ in #"{"platform":"apns","handle":"\#(token)"}"# }.joined(separator: ","))],\#(apnsNative)"#,
                "direct", "at most 1000"
            ),
            (#""direct":"\#(token)",\#(apnsNative)"#, "direct", "expected an array"),
            (#""direct":["\#(token)"],\#(apnsNative)"#, "direct[0]", "expected an object"),
            (#""direct":[{"platform":"apns","handle":"xyz"}],\#(apnsNative)"#, "direct[0].handle", "hexadecimal"),
            (#""direct":[{"platform":"mpns","handle":"x"}],\#(apnsNative)"#, "direct[0].platform", "mpns"),
            (#""direct":[{"platform":"apns","handle":"\#(token)","tags":"x"}],\#(apnsNative)"#, "direct[0].tags", "unknown member"),
            (#""direct":\#(apnsTarget),"native":{"fcm":{"message":{}}}"#, "direct[0].platform", "native has none for apns"),
            (#""direct":\#(apnsTarget),\#(apnsNative),"tags":"World""#, "tags", "remove tags"),
            (#""direct":\#(apnsTarget),\#(apnsNative),"properties":{"a":"b"}"#, "properties", "remove properties"),
            (#""direct":\#(apnsTarget),\#(apnsNative),"templates":[]"#, "templates", "remove templates"),
            (#""direct":\#(apnsTarget),\#(apnsNative),"sendAtLocal":"2030-01-01T08:00:00""#, "sendAtLocal", "use sendAt"),
            (#""direct":\#(apnsTarget),\#(apnsNative),"testRecipients":["r1"]"#, "testRecipients", "test send"),
            (#""direct":\#(apnsTarget),\#(apnsNative),"quietHours":"drop""#, "quietHours", "remove quietHours"),
        ])
    func refusesBadDirectSends(member: String, field: String, words: String) {
        let issues = ModelFixtures.issues { () throws(ValidationFailure) in try Self.decode("{\(member)}") }
        #expect(issues.contains { $0.field == field && $0.message.contains(words) }, "\(issues)")
    }
}
