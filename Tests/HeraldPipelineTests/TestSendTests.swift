import Foundation
import HeraldDomain
import HeraldPipeline
import HeraldRegistry
import HeraldStreams
import HeraldTestSupport
import Testing

@Suite("Test sends", .heavy, .serialized)
struct TestSendTests {
    /// A test send to a registration id, an installation id, a user and an id that is nothing
    /// reaches exactly the registrations they name, whatever the event's tags, with records
    /// and a status marked test under the test send's own id; the real send under the same id
    /// then goes to its whole audience, as if the test had never been. Delivered by the planner
    /// itself, and through the express lanes' topic (whose task record carries the event).
    @Test(arguments: [true, false])
    func aTestSendReachesItsRecipientsOnlyAndLeavesTheIdFree(plannerDeliversNarrowEvents: Bool) async throws {
        try await withPipelineHarness(
            slots: 16, configure: { $0.plannerDeliversNarrowEvents = plannerDeliversNarrowEvents },
            body: { harness in
                var registrations = (0..<12).map { testRegistration("r\($0)", tags: ["World"]) }
                registrations.append(testRegistration("inst-7:news", tags: ["World", "$InstallationId:{inst-7}"]))
                registrations.append(testRegistration("inst-7:sport", tags: ["Sports", "$InstallationId:{inst-7}"]))
                registrations.append(testRegistration("alice-phone", tags: ["World", "$UserId:{alice}"]))
                registrations.append(testRegistration("alice-tablet", tags: ["Sports", "$UserId:{alice}"]))
                try await harness.seed(registrations)
                harness.startRoles()

                let recipients: [TestRecipient] = [.device("r3"), .device("inst-7"), .user("alice"), .device("nobody")]
                let test = NotificationEvent(
                    id: "bn-77", audience: .expression(try TagExpression.parse("World"), source: "World"),
                    properties: ["News_English": "Summit ends"], testRecipients: recipients)
                let receipt = try await harness.publishReceipt(test)
                let testId = DerivedSend.test.eventId(of: "bn-77", partition: receipt.partition, offset: receipt.offset)
                let tested = try await harness.finalStatus(testId)
                #expect(tested.state == .completed)
                #expect(tested.isTest)
                #expect(tested.targets.total == 5, "\(tested)")
                let delivered = try await harness.deliveries(eventId: testId)
                #expect(
                    delivered.map(\.registrationId).sorted() == ["alice-phone", "alice-tablet", "inst-7:news", "inst-7:sport", "r3"],
                    "\(delivered.map(\.registrationId))")
                #expect(delivered.allSatisfy { $0.test && $0.payload.contains("Summit ends") })

                // The real send under the same id: its whole audience, not marked test.
                _ = try await harness.publish(
                    NotificationEvent(
                        id: "bn-77", audience: .expression(try TagExpression.parse("World"), source: "World"),
                        properties: ["News_English": "Summit ends"]))
                let real = try await harness.finalStatus("bn-77")
                #expect(real.state == .completed && !real.isTest)
                #expect(real.targets.total == 14)
                #expect(try await harness.deliveries(eventId: "bn-77").allSatisfy { !$0.test })
            })
    }
}
