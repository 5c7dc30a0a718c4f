import Foundation
import HeraldDomain
import Testing

@Suite("an event's reach: the times to the first, half, 90 %, 99 % and all of its deliveries")
struct ReachTests {
    @Test func percentilesAreTheFirstTimesEachShareWasReached() throws {
        let curve = try #require(ReachCurve(points: [(50, 2), (10, 8)], total: 10))
        #expect(curve == ReachCurve(count: 10, firstMs: 10, p50Ms: 10, p90Ms: 50, p99Ms: 50, allMs: 50))
        // Three of five sent: half reached at the third, the rest never.
        let partial = try #require(ReachCurve(points: [(100, 1), (300, 1), (200, 1)], total: 5))
        #expect(partial == ReachCurve(count: 3, firstMs: 100, p50Ms: 300))
        // 99 of 100 is 99 %, not all.
        let almost = try #require(ReachCurve(points: [(1, 98), (7, 1)], total: 100))
        #expect(almost.p90Ms == 1 && almost.p99Ms == 7 && almost.allMs == nil)
        #expect(ReachCurve(points: [(-20, 1)], total: 1) == ReachCurve(count: 1, firstMs: 0, p50Ms: 0, p90Ms: 0, p99Ms: 0, allMs: 0))
        #expect(ReachCurve(points: [], total: 3) == nil)
        #expect(ReachCurve(points: [(5, 1)], total: 0) == nil)
        #expect(ReachCurve(points: [(5, 0)], total: 2) == nil)
    }

    @Test func sentReceiptsAreCountedInSteps() {
        #expect(
            [0, 99, 1_234, 9_999, 10_000, 12_345, -5].map { Reach.sentField(elapsedMs: $0) }
                == ["sent@0", "sent@0", "sent@1200", "sent@9900", "sent@10000", "sent@12000", "sent@0"])
        let points = Reach.sentPoints(fields: ["sent@100": 2, "apns:sent": 3, "sent@x": 1, "sent@12000": 1])
        #expect(points.sorted { $0.elapsedMs < $1.elapsedMs }.map { "\($0.elapsedMs):\($0.count)" } == ["100:2", "12000:1"])
    }

    @Test("the reach over time: running totals per stage from the stores' step fields, ascending, times before the publish at 0")
    func reachSeriesFromTheStoresFields() {
        let start: Int64 = 1_700_000_000_000
        let series = ReachSeries(
            progress: [
                "c:\(start + 250)": 40, "c:\(start + 100)": 60, "c:\(start - 30)": 5, "n:total": 105, "c:x": 9, "c:\(start + 900)": 0,
            ],
            push: ["sent@200": 30, "sent@0": 10, "apns:sent": 40, "sent@12000": 2],
            engagements: ["opened@1500": 1, "opened": 3, "opened@40": 2, "opened:p:apns": 3],
            startMs: start)
        let text = { (points: [ReachSeries.Point]) in points.map { "\($0.elapsedMs):\($0.count)" } }
        #expect(text(series.committed) == ["0:5", "100:65", "250:105"])
        #expect(text(series.sent) == ["0:10", "200:40", "12000:42"])
        #expect(text(series.opened) == ["40:2", "1500:3"])
        // Two steps at one time (a commit before the publish and one at it) make one point.
        let same = ReachSeries(progress: ["c:\(start - 1)": 1, "c:\(start)": 2], push: [:], engagements: [:], startMs: start)
        #expect(text(same.committed) == ["0:3"])
        #expect(ReachSeries(progress: [:], push: [:], engagements: [:], startMs: start) == ReachSeries())
    }

    @Test func theStatusCarriesItsReach() throws {
        var status = StatusRecord.accepted(eventId: "bn-1", taskCount: 1, publishedAt: nil, acceptedAt: Date(timeIntervalSince1970: 0))
        status.reach = Reach(committed: ReachCurve(count: 2, firstMs: 4, p50Ms: 4, p90Ms: 9, p99Ms: 9, allMs: 9))
        let encoded = try JSONEncoder().encode(status)
        #expect(String(decoding: encoded, as: UTF8.self).contains(#""reach":{"committed":{"#))
        #expect(try JSONDecoder().decode(StatusRecord.self, from: encoded) == status)
    }
}
