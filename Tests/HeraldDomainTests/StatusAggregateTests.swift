import Foundation
import Testing
@testable import HeraldDomain

@Suite("Status aggregation")
struct StatusAggregateTests {
    static let published = ModelFixtures.date("2026-11-21T18:00:00.000Z")
    static let accepted = ModelFixtures.date("2026-11-21T18:00:00.020Z")

    static func progress(
        _ index: Int, of count: Int = 3, apns: Int, fcm: Int, skipped: Int = 0, finishedAtMs: Int64, firstAtMs: Int64? = nil
    ) -> TaskProgress {
        var delivered = DeliveryCounts()
        for _ in 0..<apns { delivered.add(platform: .apns, template: "newsTemplate") }
        for _ in 0..<fcm { delivered.add(platform: .fcm, template: DeliveryRecord.nativeTemplateName) }
        let base = ISO8601Timestamp.milliseconds(published)
        return TaskProgress(
            eventId: "e1", taskIndex: index, taskCount: count, delivered: delivered, skipped: skipped,
            startedAt: ISO8601Timestamp.date(milliseconds: base + 30),
            finishedAt: ISO8601Timestamp.date(milliseconds: base + finishedAtMs),
            firstDeliveryAt: firstAtMs.map { ISO8601Timestamp.date(milliseconds: base + $0) }
        )
    }

    @Test("folds task progress into a completed summary, counting each task once")
    func folds() {
        var aggregate = StatusAggregate(eventId: "e1", taskCount: 3, publishedAt: Self.published, acceptedAt: Self.accepted)
        #expect(aggregate.record.state == .accepted)
        #expect(aggregate.apply(Self.progress(1, apns: 2, fcm: 1, skipped: 1, finishedAtMs: 900, firstAtMs: 40)) == .counted)
        #expect(aggregate.record.state == .processing)
        #expect(aggregate.record.timings.completedAt == nil)
        #expect(aggregate.apply(Self.progress(1, apns: 2, fcm: 1, skipped: 1, finishedAtMs: 950, firstAtMs: 45)) == .duplicate)
        #expect(aggregate.apply(Self.progress(0, apns: 3, fcm: 0, finishedAtMs: 1_200, firstAtMs: 35)) == .counted)
        #expect(!aggregate.isComplete)
        #expect(aggregate.apply(Self.progress(2, apns: 0, fcm: 0, skipped: 2, finishedAtMs: 700)) == .counted)
        #expect(aggregate.isComplete)
        #expect(aggregate.apply(Self.progress(2, apns: 0, fcm: 0, finishedAtMs: 700)) == .duplicate)

        let record = aggregate.record
        #expect(record.state == .completed)
        #expect(record.tasks == StatusRecord.Tasks(planned: 3, completed: 3))
        #expect(
            record.targets == DeliveryCounts(total: 6, byPlatform: ["apns": 5, "fcm": 1], byTemplate: ["newsTemplate": 5, "$native": 1]))
        #expect(record.skipped == 3)
        #expect(record.timings.firstDeliveryAt == ISO8601Timestamp.date(milliseconds: ISO8601Timestamp.milliseconds(Self.published) + 35))
        #expect(record.timings.completedAt == ISO8601Timestamp.date(milliseconds: ISO8601Timestamp.milliseconds(Self.published) + 1_200))
        #expect(record.timings.durationMs == 1_200)
    }

    @Test("the order of arrival does not change the summary")
    func orderIndependent() {
        let parts = [
            Self.progress(0, apns: 1, fcm: 2, finishedAtMs: 500, firstAtMs: 60),
            Self.progress(1, apns: 4, fcm: 0, skipped: 1, finishedAtMs: 300, firstAtMs: 50),
            Self.progress(2, apns: 0, fcm: 1, finishedAtMs: 800, firstAtMs: 70),
        ]
        var records: [StatusRecord] = []
        for order in [[0, 1, 2], [2, 1, 0], [1, 2, 1, 0, 0]] {
            var aggregate = StatusAggregate(eventId: "e1", taskCount: 3, publishedAt: Self.published, acceptedAt: Self.accepted)
            for index in order { aggregate.apply(parts[index]) }
            records.append(aggregate.record)
        }
        #expect(records.allSatisfy { $0 == records[0] })
        #expect(records[0].targets.total == 8)
    }

    @Test("progress of another event, outside the plan or after completion is ignored")
    func ignores() {
        var aggregate = StatusAggregate(eventId: "e1", taskCount: 1, publishedAt: nil, acceptedAt: Self.accepted)
        var other = Self.progress(0, of: 1, apns: 1, fcm: 0, finishedAtMs: 100)
        other.eventId = "e2"
        #expect(aggregate.apply(other) == .ignored)
        #expect(aggregate.apply(Self.progress(1, of: 1, apns: 1, fcm: 0, finishedAtMs: 100)) == .ignored)
        #expect(aggregate.apply(Self.progress(0, of: 2, apns: 1, fcm: 0, finishedAtMs: 100)) == .ignored)
        #expect(aggregate.apply(Self.progress(0, of: 1, apns: 1, fcm: 0, finishedAtMs: 100)) == .counted)
        #expect(aggregate.isComplete)
        // Without publishedAt the duration runs from acceptance (20 ms after the base).
        #expect(aggregate.record.timings.durationMs == 80)
    }

    @Test("an event planned with no tasks is complete at once")
    func zeroTasks() {
        let aggregate = StatusAggregate(eventId: "e1", taskCount: 0, publishedAt: Self.published, acceptedAt: Self.accepted)
        #expect(aggregate.isComplete)
        #expect(aggregate.record.timings.durationMs == 20)
    }

    @Test("records and the aggregate survive JSON")
    func codable() throws {
        var aggregate = StatusAggregate(eventId: "e1", taskCount: 2, publishedAt: Self.published, acceptedAt: Self.accepted)
        aggregate.apply(Self.progress(0, of: 2, apns: 2, fcm: 1, finishedAtMs: 400, firstAtMs: 50))
        let restored = try JSONDecoder().decode(StatusAggregate.self, from: JSONEncoder().encode(aggregate))
        #expect(restored == aggregate)
        var resumed = restored
        #expect(resumed.apply(Self.progress(0, of: 2, apns: 2, fcm: 1, finishedAtMs: 400)) == .duplicate)

        let text = String(decoding: try JSONEncoder().encode(aggregate.record), as: UTF8.self)
        #expect(text.contains(#""state":"processing""#))
        #expect(text.contains(#""acceptedAt":"2026-11-21T18:00:00.020Z""#))
        #expect(try JSONDecoder().decode(StatusRecord.self, from: Data(text.utf8)) == aggregate.record)

        let progress = Self.progress(1, of: 2, apns: 1, fcm: 0, finishedAtMs: 10)
        #expect(try JSONDecoder().decode(TaskProgress.self, from: JSONEncoder().encode(progress)) == progress)
    }

    @Test("expired and rejected records are final")
    func terminal() {
        let expired = StatusRecord.expired(
            eventId: "e1", expiresAt: ModelFixtures.date("2026-11-21T17:00:00Z"), publishedAt: nil, at: Self.accepted)
        #expect(expired.state.isTerminal)
        #expect(expired.reason?.contains("2026-11-21T17:00:00Z") == true)
        let rejected = StatusRecord.rejected(eventId: "e1", reason: "duplicate event id", publishedAt: nil, at: Self.accepted)
        #expect(rejected.state == .rejected)
        #expect(!StatusRecord.State.processing.isTerminal)
    }

    @Test("an event stopped in flight ends cancelled once every task reported, with what was delivered before the stop")
    func stopped() {
        var aggregate = StatusAggregate(eventId: "e1", taskCount: 3, publishedAt: Self.published, acceptedAt: Self.accepted)
        #expect(aggregate.apply(Self.progress(0, apns: 3, fcm: 1, finishedAtMs: 400)) == .counted)
        var cut = Self.progress(1, apns: 1, fcm: 0, finishedAtMs: 500)
        cut.stopped = true
        #expect(aggregate.apply(cut) == .counted)
        #expect(aggregate.record.state == .processing)
        var skipped = Self.progress(2, apns: 0, fcm: 0, finishedAtMs: 520)
        skipped.stopped = true
        #expect(aggregate.apply(skipped) == .counted)
        #expect(aggregate.isComplete)
        #expect(aggregate.record.state == .cancelled)
        #expect(aggregate.record.targets.total == 5)
        #expect(aggregate.record.reason?.hasPrefix("stopped in flight: 2 of 3 tasks") == true)
        #expect(aggregate.apply(Self.progress(1, apns: 9, fcm: 9, finishedAtMs: 600)) == .duplicate)
    }
}
