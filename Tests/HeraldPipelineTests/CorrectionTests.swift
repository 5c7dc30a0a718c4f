import Foundation
import HeraldDomain
import HeraldPipeline
import HeraldRedis
import HeraldRegistry
import HeraldStreams
import HeraldTestSupport
import Testing

@Suite("Corrections", .heavy, .serialized)
struct CorrectionTests {
    /// A correction reaches exactly the devices the original reached — read from the original's
    /// delivery records, not from its tags: a registration that joined the audience afterwards
    /// gets nothing, one removed since is `registration_gone`, one whose receipt said unsent is
    /// left out — with the new text, in the same replace header as the original on every
    /// platform, marked `correctionOf`; the original's status lists it. A withdrawal goes to
    /// the same devices as a silent push naming the replace key.
    @Test func aCorrectionReachesTheOriginalsDevicesAndReplacesItsAlert() async throws {
        try await withPipelineHarness(
            slots: 16,
            body: { harness in
                var registrations = (0..<10).map { testRegistration("r\($0)", tags: ["World"]) }
                registrations += (0..<6).map { testRegistration("f\($0)", platform: .fcm, tags: ["World"], language: "French") }
                registrations += (0..<4).map { testRegistration("s\($0)", tags: ["Sports"]) }
                try await harness.seed(registrations)
                harness.startRoles()

                let original = NotificationEvent(
                    id: "bn-900", audience: .expression(try TagExpression.parse("World"), source: "World"),
                    properties: ["News_English": "Summit ends", "News_French": "Fin du sommet"])
                _ = try await harness.publish(original)
                let sent = try await harness.finalStatus("bn-900")
                #expect(sent.state == .completed && sent.targets.total == 16, "\(sent)")
                let originalDeliveries = try await harness.deliveries(eventId: "bn-900")
                #expect(Set(originalDeliveries.map(\.registrationId)).count == 16)

                // After the send: a new device joins the audience, one leaves, one was never sent to.
                try await harness.seed([testRegistration("late", tags: ["World"])])
                _ = try await harness.index.apply([RegistryRecord(change: .registrationDeleted(id: "r9", version: 2))])
                let layout = harness.configuration.layout
                _ = try await harness.pool.withConnection {
                    try await $0.send(.sadd(layout.unsentKey(eventId: "bn-900"), ["bn-900/f5/newsFrench"]))
                }

                let fixed = CorrectionRequest(properties: ["News_English": "Summit ends without agreement"], reason: "wrong outcome")
                let receipt = try await harness.publishReceipt(fixed.correction(of: original, caller: "desk", now: Date()))
                let correctionId = DerivedSend.correction.eventId(of: "bn-900", partition: receipt.partition, offset: receipt.offset)
                let corrected = try await harness.finalStatus(correctionId)
                #expect(corrected.state == .completed, "\(corrected)")
                #expect(corrected.correctionOf == "bn-900")
                #expect(corrected.targets.total == 14, "\(corrected)")
                #expect(corrected.skippedReasons?["registration_gone"] == 1, "\(corrected)")
                #expect(corrected.skippedReasons?["not_sent"] == 1, "\(corrected)")

                let deliveries = try await harness.deliveries(eventId: correctionId)
                let expected = Set(originalDeliveries.map(\.registrationId)).subtracting(["r9", "f5"])
                #expect(Set(deliveries.map(\.registrationId)) == expected, "\(deliveries.map(\.registrationId).sorted())")
                #expect(deliveries.allSatisfy { $0.correctionOf == "bn-900" })
                let replaceHeaders = Dictionary(
                    originalDeliveries.map { ($0.registrationId, $0.headers[DeliveryHeaders.replaceHeaderName($0.platform)]) },
                    uniquingKeysWith: { first, _ in first })
                for delivery in deliveries {
                    let header = delivery.headers[DeliveryHeaders.replaceHeaderName(delivery.platform)]
                    #expect(header != nil && header == replaceHeaders[delivery.registrationId] ?? nil, "\(delivery.registrationId)")
                }
                #expect(deliveries.filter { $0.platform == .apns }.allSatisfy { $0.payload.contains("without agreement") })
                #expect(deliveries.filter { $0.platform == .fcm }.allSatisfy { $0.payload.contains("Fin du sommet") })

                let listed = try await StatusReader(pool: harness.pool, layout: layout).status(eventId: "bn-900")
                #expect(listed?.corrections == [correctionId])

                // A withdrawal: the same devices, a silent push naming the replace key.
                let withdrawal = CorrectionRequest(withdraw: true)
                let second = try await harness.publishReceipt(withdrawal.correction(of: original, caller: "desk", now: Date()))
                let withdrawalId = DerivedSend.correction.eventId(of: "bn-900", partition: second.partition, offset: second.offset)
                #expect(try await harness.finalStatus(withdrawalId).targets.total == 14)
                for delivery in try await harness.deliveries(eventId: withdrawalId) {
                    let key = delivery.headers[DeliveryHeaders.replaceHeaderName(delivery.platform)] ?? "-"
                    #expect(delivery.payload.contains(key), "\(delivery.payload)")
                    #expect(!delivery.payload.contains("Summit"))
                    if delivery.platform == .apns { #expect(delivery.headers["apns-push-type"] == "background") }
                }
            })
    }

    /// A correction of an event that is unknown, or whose fan-out has not completed, is a dead
    /// letter with a `rejected` status under the correction's id; nothing is delivered.
    @Test func aCorrectionOfAnUnknownEventIsRejected() async throws {
        try await withPipelineHarness(
            slots: 16,
            body: { harness in
                try await harness.seed([testRegistration("r1", tags: ["World"])])
                harness.startRoles()
                let ghost = NotificationEvent(id: "never-sent", properties: ["News_English": "x"])
                let receipt = try await harness.publishReceipt(
                    CorrectionRequest(withdraw: true).correction(of: ghost, caller: nil, now: Date()))
                let id = DerivedSend.correction.eventId(of: "never-sent", partition: receipt.partition, offset: receipt.offset)
                let status = try await harness.finalStatus(id)
                #expect(status.state == .rejected)
                #expect(status.reason?.hasPrefix("unknown_event") == true, "\(status.reason ?? "-")")
                #expect(try await harness.deliveries(eventId: id).isEmpty)
            })
    }
}
