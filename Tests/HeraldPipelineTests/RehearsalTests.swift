import Foundation
import HeraldDomain
import HeraldPipeline
import HeraldRegistry
import HeraldStreams
import HeraldTestSupport
import Testing

@Suite("Rehearsals (dryRun)", .heavy, .serialized)
struct RehearsalTests {
    /// A rehearsal counts exactly what the real send then delivers, per platform, template and
    /// skip reason, renders one preview per (platform, template) naming the properties its
    /// template reads that the event lacks and those it fell back to, writes no delivery, and
    /// leaves the event's id free for the real send.
    @Test func aRehearsalCountsWhatTheSendDeliversAndDeliversNothing() async throws {
        try await withPipelineHarness(
            slots: 16,
            body: { harness in
                var registrations = (0..<30).map { testRegistration("en\($0)", tags: ["World"]) }
                registrations += (0..<20).map { testRegistration("fr\($0)", platform: .fcm, tags: ["World"], language: "French") }
                registrations += (0..<5).map { testRegistration("native\($0)", platform: .fcm, tags: ["World"], language: nil) }
                registrations += (0..<10).map { testRegistration("sports\($0)", tags: ["Sports"]) }
                // Mandarin readers, whose property the event forgot: their alert would be empty.
                registrations += (0..<3).map { testRegistration("zh\($0)", tags: ["World"], language: "Mandarin") }
                // Cantonese readers: no headline in their language, the story falls back to English.
                let cantonese = RegistrationTemplate(
                    name: "newsCantonese",
                    body: #"{"aps":{"alert":{"title":"$(Head_Cantonese)","body":"$(News_Cantonese | News_English)"}}}"#)
                registrations += (0..<4).map {
                    Registration(
                        registrationId: "yue\($0)", platform: .apns, handle: String(repeating: "ef", count: 32), tags: ["World"],
                        template: cantonese, version: 1)
                }
                try await harness.seed(registrations)
                harness.startRoles()
                let event = NotificationEvent(
                    id: "bn-90", audience: .expression(try TagExpression.parse("World"), source: "World"),
                    properties: ["News_English": "Summit ends", "News_French": "Fin du sommet"])

                let receipt = try await harness.publishReceipt(event, rehearsal: true)
                let rehearsalId = DerivedSend.rehearsal.eventId(of: "bn-90", partition: receipt.partition, offset: receipt.offset)
                let rehearsed = try await harness.finalStatus(rehearsalId)
                #expect(rehearsed.isRehearsal && rehearsed.state == .completed)
                #expect(rehearsed.targets.total == 54 && rehearsed.targets.byPlatform == ["apns": 34, "fcm": 20], "\(rehearsed)")
                #expect(rehearsed.targets.byTemplate == ["newsEnglish": 30, "newsFrench": 20, "newsCantonese": 4])
                #expect(
                    rehearsed.skipped == 8 && rehearsed.skippedReasons == ["no_native_payload": 5, "empty_alert": 3], "\(rehearsed)")
                #expect(try await harness.deliveries(eventId: rehearsalId).isEmpty, "a rehearsal delivered")
                let previews = try await StatusReader(pool: harness.pool, layout: harness.configuration.layout)
                    .previews(eventId: rehearsalId)
                #expect(previews.map(\.field) == ["apns|newsCantonese", "apns|newsEnglish", "fcm|newsFrench"])
                #expect(previews.map(\.missingProperties) == [["head_cantonese"], nil, nil])
                #expect(previews.map(\.fallbacks) == [["news_english"], nil, nil])
                #expect(previews.allSatisfy { $0.bytes == $0.payload.utf8.count && $0.bytes <= $0.limit })
                #expect(previews.first?.payload.contains("Summit ends") == true && previews.last?.payload.contains("Fin du sommet") == true)

                _ = try await harness.publish(event)
                let sent = try await harness.finalStatus("bn-90")
                #expect(!sent.isRehearsal && sent.state == .completed)
                #expect(sent.targets == rehearsed.targets)
                #expect(sent.skipped == rehearsed.skipped && sent.skippedReasons == rehearsed.skippedReasons)
                let delivered = try await harness.deliveries(eventId: "bn-90")
                #expect(delivered.count == 54)
                #expect(delivered.filter { $0.template == "newsCantonese" }.allSatisfy { $0.fallbacks == ["news_english"] })
                // The hub's recent events (the console's list) name the send, not its rehearsal,
                // with the reach of its deliveries over time.
                let reader = StatusReader(pool: harness.pool, layout: harness.configuration.layout)
                #expect(try await reader.recent(limit: 10).map(\.eventId) == ["bn-90"])
                let series = try #require(try await reader.reachSeries(eventId: "bn-90"))
                #expect(series.committed.last?.count == 54, "\(series)")
                #expect(
                    zip(series.committed, series.committed.dropFirst()).allSatisfy { $0.elapsedMs < $1.elapsedMs && $0.count < $1.count })
            })
    }
}
