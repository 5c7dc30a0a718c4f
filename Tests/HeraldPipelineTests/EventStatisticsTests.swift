import Foundation
import HeraldDomain
@testable import HeraldPipeline
import Testing
import HeraldStreams

@Suite("Event statistics from the log")
struct EventStatisticsTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    static func progress(_ task: Int, delivered: Int, skipped: [String: Int] = [:]) -> TaskProgress {
        var progress = TaskProgress(
            eventId: "bn-1", taskIndex: task, taskCount: 2,
            delivered: DeliveryCounts(total: delivered, byPlatform: ["apns": delivered], byTemplate: ["news": delivered]),
            skipped: skipped.values.reduce(0, +), startedAt: t0, finishedAt: t0.addingTimeInterval(1)
        )
        progress.skippedReasons = skipped
        return progress
    }

    @Test("the final status wins, a retried task counts once, skips add up by reason, latency percentiles by nearest rank")
    func fold() throws {
        var statistics = EventStatistics()
        let accepted = StatusRecord.accepted(eventId: "bn-1", taskCount: 2, publishedAt: Self.t0, acceptedAt: Self.t0)
        statistics.add(status: accepted)
        statistics.add(progress: Self.progress(0, delivered: 3, skipped: ["payload_too_large": 1]))
        // Task 0 redone after a crash: its second report replaces the first.
        statistics.add(progress: Self.progress(0, delivered: 3, skipped: ["payload_too_large": 1]))
        statistics.add(progress: Self.progress(1, delivered: 2, skipped: ["no_native_payload": 2, "payload_too_large": 1]))
        var completed = StatusAggregate(accepted: accepted)
        _ = completed.apply(Self.progress(0, delivered: 3, skipped: ["payload_too_large": 1]))
        _ = completed.apply(Self.progress(1, delivered: 2, skipped: ["no_native_payload": 2, "payload_too_large": 1]))
        statistics.add(status: completed.record)
        // A late copy of the accepted record does not move the status back.
        statistics.add(status: accepted)
        for millis in [10, 20, 30, 40, 1_000] {
            statistics.add(
                delivery: DeliveryRecord(
                    eventId: "bn-1", registrationId: "r\(millis)", platform: .apns, handle: "h", template: "news", payload: "{}",
                    headers: DeliveryHeaders(), expiresAt: nil, publishedAt: Self.t0,
                    renderedAt: Self.t0.addingTimeInterval(Double(millis) / 1_000)
                ))
        }
        let events = statistics.events()
        let event = try #require(events.first)
        #expect(events.count == 1)
        #expect(event.state == "completed")
        #expect(event.tasksCompleted == 2)
        #expect(event.deliveredByStatus == 5)
        #expect(event.byPlatform == ["apns": 5])
        #expect(event.skipped == 4)
        #expect(event.skippedByReason == ["payload_too_large": 2, "no_native_payload": 2])
        #expect(event.deliveryRecords == 5)
        // Both tasks finished a second after the publish: every delivery committed then.
        #expect(event.reach?.committed == ReachCurve(count: 5, firstMs: 1_000, p50Ms: 1_000, p90Ms: 1_000, p99Ms: 1_000, allMs: 1_000))
        #expect(event.reach?.sent == nil)
        let latency = try #require(event.latencyMs)
        #expect(abs(latency.p50 - 30) < 0.01)
        #expect(abs(latency.p90 - 1_000) < 0.01)
        #expect(abs(latency.max - 1_000) < 0.01)
    }

    @Test("push outcomes come from the receipts: failures counted per platform and outcome, publish-to-pushed latency from sent ones")
    func receipts() throws {
        var statistics = EventStatistics()
        var status = StatusRecord.accepted(eventId: "bn-1", taskCount: 1, publishedAt: Self.t0, acceptedAt: Self.t0)
        status.state = .completed
        status.targets.total = 5
        statistics.add(status: status)
        func receipt(_ n: Int, _ platform: Platform, _ outcome: PushOutcome, afterMs: Int) -> PushReceipt {
            PushReceipt(
                deliveryId: "d\(n)", eventId: "bn-1", registrationId: "r\(n)", platform: platform, outcome: outcome, attempts: 1,
                decidedAt: Self.t0.addingTimeInterval(Double(afterMs) / 1_000))
        }
        statistics.add(receipt: receipt(1, .apns, .sent, afterMs: 100))
        statistics.add(receipt: receipt(2, .apns, .sent, afterMs: 300))
        statistics.add(receipt: receipt(3, .apns, .failed, afterMs: 900))
        statistics.add(receipt: receipt(4, .fcm, .unregistered, afterMs: 200))
        statistics.add(receipt: receipt(5, .fcm, .sent, afterMs: 200))
        let event = try #require(statistics.events().first)
        #expect(event.pushed == ["apns": ["sent": 2, "failed": 1], "fcm": ["unregistered": 1, "sent": 1]])
        #expect(event.pushFailures == 2)
        #expect(event.failed == 0, "the status's failed counts deliveries that could not be built, not pushes")
        // Three of the five deliveries sent: half of them by 300 ms, 90 % never.
        #expect(event.reach?.sent == ReachCurve(count: 3, firstMs: 100, p50Ms: 300))
        let latency = try #require(event.pushedLatencyMs)
        #expect(abs(latency.p50 - 200) < 0.01)
        #expect(abs(latency.max - 300) < 0.01)
    }
}
