import Foundation
import Testing
@testable import HeraldDomain

@Suite("Urgency")
struct UrgencyDomainTests {
    @Test("urgency reads breaking, normal and bulk, is absent by default, and survives canonical JSON")
    func reads() throws {
        for urgency in Urgency.allCases {
            let event = try NotificationEvent.decode(ModelFixtures.bytes(#"{"id":"u","urgency":"\#(urgency.rawValue)"}"#))
            #expect(event.urgency == urgency)
            #expect(try NotificationEvent.decode(event.canonicalJSON()) == event)
        }
        #expect(try NotificationEvent.decode(ModelFixtures.bytes(#"{"id":"u"}"#)).urgency == nil)
    }

    @Test("an unknown urgency is refused naming the field and the values it may take")
    func refusesUnknown() {
        let issues = ModelFixtures.issues { () throws(ValidationFailure) in
            try NotificationEvent.decode(ModelFixtures.bytes(#"{"urgency":"urgent"}"#))
        }
        #expect(issues.contains { $0.field == "urgency" && $0.message.contains(#""breaking", "normal" or "bulk""#) }, "\(issues)")
    }
}
