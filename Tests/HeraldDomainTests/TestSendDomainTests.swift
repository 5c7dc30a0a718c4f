import Foundation
import Testing
@testable import HeraldDomain

@Suite("Test sends: recipients, ids, marks")
struct TestSendDomainTests {
    static func decode(_ text: String) throws(ValidationFailure) -> NotificationEvent {
        try NotificationEvent.decode(ModelFixtures.bytes(text))
    }

    @Test("testRecipients reads registration and installation ids and $UserId: values, once each, and survives canonical JSON")
    func readsRecipients() throws {
        let event = try Self.decode(#"{"id":"bn-1","testRecipients":["reg-9","inst-7","$UserId:alice","reg-9"],"properties":{"a":"b"}}"#)
        #expect(event.testRecipients == [.device("reg-9"), .device("inst-7"), .user("alice")])
        #expect(try NotificationEvent.decode(event.canonicalJSON()) == event)
        #expect(TestRecipient.user("alice").tag == "$UserId:{alice}")
        #expect(TestRecipient.device("inst-7").tag == "$InstallationId:{inst-7}")
    }

    @Test(
        "a bad testRecipients is refused naming the entry: empty, over 100, not an id, an empty user, with a schedule",
        arguments: [
            (#""testRecipients":[]"#, "testRecipients", "empty list"),
            (#""testRecipients":[\#((0...100).map { "\"r\($0)\"" }.joined(separator: ","))]"#, "testRecipients", "the limit is 100"),
            (#""testRecipients":["ok","a b"]"#, "testRecipients[1]", "registration id"),
            (#""testRecipients":["$UserId:"]"#, "testRecipients[0]", "user id cannot be empty"),
            (#""testRecipients":["r1"],"sendAt":"2030-01-01T00:00:00Z""#, "testRecipients", "a test send goes now"),
        ])
    func refusesBadRecipients(member: String, field: String, words: String) {
        let issues = ModelFixtures.issues { () throws(ValidationFailure) in try Self.decode("{\(member)}") }
        #expect(issues.contains { $0.field == field && $0.message.contains(words) }, "\(issues)")
    }

    @Test("a test send's or rehearsal's id names its record and its kind, and cannot be an event's own id")
    func ids() {
        let id = DerivedSend.test.eventId(of: "bn-1", partition: 2, offset: 41)
        #expect(id == "bn-1~test-2-41")
        #expect(DerivedSend.parse(id)?.eventId == "bn-1" && DerivedSend.parse(id)?.kind == .test)
        #expect(DerivedSend.parse(DerivedSend.rehearsal.eventId(of: "bn-1", partition: 0, offset: 7))?.kind == .rehearsal)
        #expect(IdentifierRules.eventIdProblem(id) != nil)
        for other in ["bn-1", "bn-1~test-2", "bn-1~test-x-1", "a b~test-1-2", "~test-1-2", "bn-1~retest-1-2"] {
            #expect(DerivedSend.parse(other) == nil, "\(other)")
        }
    }

    @Test("delivery records and statuses of a test send say test; others say nothing")
    func marks() throws {
        var record = DeliveryRecordTests.contractRecord
        record.test = true
        let encoded = String(decoding: record.encoded(), as: UTF8.self)
        #expect(encoded.hasSuffix(#","test":true}"#))
        #expect(try DeliveryRecord.decode(record.encoded()) == record)
        #expect(try JSONDecoder().decode(DeliveryRecord.self, from: Data(record.encoded())) == record)
        #expect(!String(decoding: DeliveryRecordTests.contractRecord.encoded(), as: UTF8.self).contains("test"))

        let status = StatusRecord.accepted(eventId: "bn-1~test-0-3", taskCount: 1, publishedAt: nil, acceptedAt: Date())
        #expect(status.isTest)
        #expect(String(decoding: try JSONEncoder().encode(status), as: UTF8.self).contains(#""test":true"#))
        let real = StatusRecord.accepted(eventId: "bn-1", taskCount: 1, publishedAt: nil, acceptedAt: Date())
        #expect(!String(decoding: try JSONEncoder().encode(real), as: UTF8.self).contains("test"))
    }
}
