import Foundation
import HeraldDomain
import HeraldPipeline
import HeraldRegistry
import Testing

/// Inputs that once stopped delivery for everyone: each must cost only itself.
@Suite("Poison inputs", .serialized)
struct PoisonInputTests {
    @Test("an amplifying template is skipped for its device; the rest of the event and later events deliver")
    func amplifyingTemplateIsSkipped() async throws {
        try await withPipelineHarness(slots: 8) { harness in
            // Written straight to the index, as a registration made before the
            // registration-time check (or produced to the topic directly) would be.
            let fields = (0..<1_024).map { #""k\#($0)":"$(msg)""# }.joined(separator: ",")
            let amplifying = Registration(
                registrationId: "amp", platform: .apns, handle: String(repeating: "ef", count: 32), tags: ["Sports"],
                template: RegistrationTemplate(name: "amp", body: "{" + fields + "}"), version: 1
            )
            var plain = testRegistration("plain", tags: ["Sports"], language: "English")
            plain.template = RegistrationTemplate(name: "plain", body: #"{"aps":{"alert":"$(msg, 40)"}}"#)
            try await harness.seed([amplifying, plain])
            harness.startRoles()

            let hostile = NotificationEvent(
                id: "amp-1", audience: .expression(.tag("Sports"), source: "Sports"),
                properties: ["msg": String(repeating: "m", count: 1_000)]
            )
            _ = try await harness.publish(hostile)
            let later = NotificationEvent(
                id: "amp-2", audience: .expression(.tag("Sports"), source: "Sports"), properties: ["msg": "Final score"]
            )
            _ = try await harness.publish(later)

            let status = try await harness.finalStatus("amp-1")
            let laterStatus = try await harness.finalStatus("amp-2")
            try await harness.stopRoles()

            #expect(status.state == .completed)
            #expect(status.targets.total == 1)
            #expect(status.skipped == 1)
            let delivered = try await harness.deliveries(eventId: "amp-1")
            #expect(delivered.map(\.registrationId) == ["plain"])
            #expect(delivered.first?.payload == #"{"aps":{"alert":"mmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmm"}}"#)

            // Its 16 KB of fixed text never fits, whatever the value: skipped again, and the
            // event after it is delivered all the same.
            #expect(laterStatus.state == .completed)
            #expect(laterStatus.targets.total == 1)
            #expect(laterStatus.skipped == 1)
            #expect(try await harness.deliveries(eventId: "amp-2").map(\.registrationId) == ["plain"])
        }
    }
}
