import Foundation
import HeraldDomain
import HeraldPipeline
import HeraldRedis
import HeraldTestSupport
import Testing

@Suite("Dead letters", .heavy, .serialized)
struct DeadLetterTests {
    @Test func invalidEventsLandInTheDeadLetterTopicAndTheWorkerCarriesOn() async throws {
        try await withPipelineHarness(slots: 4) { configuration in
            configuration.eventLimits = EventLimits(maxBytes: 4_096)
        } body: { harness in
            try await harness.seed([testRegistration("r1", tags: ["World"])])
            harness.startRoles()

            let oversized = #"{"id":"dl-5","properties":{"News_English":""# + String(repeating: "x", count: 8_000) + #""}}"#
            let cases: [(bytes: [UInt8]?, reason: String)] = [
                (Array(#"{"tags": "#.utf8), "malformed_json"),
                (Array(#"{"id":"dl-2","tags":"World &&"}"#.utf8), "invalid_tag_expression"),
                (Array(#"{"id":"dl-3","tags":""}"#.utf8), "empty_tags"),
                (Array(#"{"id":"dl-4","properties":"nope"}"#.utf8), "invalid_type"),
                (Array(oversized.utf8), "too_large"),
                (nil, "empty_record"),
            ]
            for (position, entry) in cases.enumerated() {
                try await harness.publishRaw(entry.bytes, key: "k\(position)", partition: 0)
            }
            _ = try await harness.publish(
                NotificationEvent(id: "ok-1", audience: .expression(.tag("World"), source: "World"), properties: ["News_English": "fine"]))
            let ok = try await harness.finalStatus("ok-1")
            #expect(ok.state == .completed)
            #expect(ok.targets.total == 1)

            // ok-1 may sit on another partition than the bad records and finish first.
            var letters = try await harness.records(harness.configuration.topics.eventsDeadLetters)
            for _ in 0..<60 where letters.count < cases.count {
                try await Task.sleep(for: .milliseconds(500))
                letters = try await harness.records(harness.configuration.topics.eventsDeadLetters)
            }
            #expect(letters.count == cases.count)
            for (letter, entry) in zip(letters, cases) {
                let envelope = try JSONValue.parse(letter.value ?? [])
                #expect(envelope["reason"] == .string(entry.reason))
                #expect(envelope["source"]?["topic"] == .string(harness.configuration.topics.events))
                #expect(envelope["source"]?["partition"] == .number("0"))
                if let original = entry.bytes {
                    guard case .string(let base64)? = envelope["originalBase64"] else {
                        Issue.record("no original bytes for \(entry.reason)")
                        continue
                    }
                    #expect(Data(base64Encoded: base64).map(Array.init) == original)
                } else {
                    #expect(envelope["originalBase64"] == .null)
                }
            }
            // An invalid event whose id was readable is reported as rejected under that id.
            let reader = StatusReader(pool: harness.pool, layout: harness.configuration.layout)
            let rejected = try await reader.status(eventId: "dl-2")
            #expect(rejected?.state == .rejected)
            #expect(rejected?.reason?.contains("invalid_tag_expression") == true)
            // Only ok-1 reached the task topics.
            try await harness.stopRoles()
            let deliveries = try await harness.records(harness.configuration.topics.deliveries)
            #expect(deliveries.count == 1)
        }
    }
}
