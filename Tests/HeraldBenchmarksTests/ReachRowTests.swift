import Foundation
import HeraldDomain
@testable import HeraldBenchmarks
import Testing

@Suite("The reach rows: publish to pushed, against the servers' ceiling for the row's mix")
struct ReachRowTests {
    private func run(senders: Int, perSecond: Double, sent: [String: Int], tenth: Int, peak: Int) -> BenchmarkReport.Reach.Run {
        BenchmarkReport.Reach.Run(
            senders: senders, expected: 1_000,
            committed: ReachCurve(count: 1_000, firstMs: 20, p50Ms: 200, p90Ms: 300, p99Ms: 400, allMs: 450),
            sent: ReachCurve(count: sent.values.reduce(0, +), firstMs: 30, p50Ms: 1_200, p90Ms: 2_000, p99Ms: 2_400, allMs: 2_500),
            sentByPlatform: sent, notSent: 1_000 - sent.values.reduce(0, +), pushesPerSecond: perSecond, senderCPUSeconds: 0.05,
            fanoutCPUSeconds: 0.01, senderBaselineRSSBytes: 50 << 20, senderTenthRSSBytes: tenth << 20, senderPeakRSSBytes: peak << 20)
    }

    @Test("the mix's ceiling weighs each platform's by its share of the pushes")
    func mixedCeiling() throws {
        let reach = BenchmarkReport.Reach(
            population: 1_000, apnsCeilingPerSecond: 1_000, fcmCeilingPerSecond: 500, ceilingCommand: "h2load", connections: 2,
            streams: 100)
        let mixed = try #require(
            reach.mixedCeiling(run(senders: 1, perSecond: 400, sent: ["apns": 550, "fcm": 450], tenth: 100, peak: 110)))
        // 0.55 / 1000 + 0.45 / 500 = 0.00145 s per push.
        #expect(abs(mixed - 1 / 0.00145) < 0.01)
        #expect(reach.mixedCeiling(run(senders: 1, perSecond: 400, sent: [:], tenth: 100, peak: 110)) == nil)
        var missing = reach
        missing.fcmCeilingPerSecond = nil
        #expect(missing.mixedCeiling(run(senders: 1, perSecond: 400, sent: ["apns": 1_000], tenth: 100, peak: 110)) == nil)
    }

    @Test("one sender is judged against the ceiling and every run by its sent count and RSS growth")
    func rows() {
        var report = BenchmarkReportFixture.report(first: 300_000, after: nil, broadcastPerSecond: 240_000)
        var reach = BenchmarkReport.Reach(
            population: 1_000, apnsCeilingPerSecond: 1_000, fcmCeilingPerSecond: 500, ceilingCommand: "h2load -n 1000", connections: 2,
            streams: 100)
        reach.runs = [
            run(senders: 1, perSecond: 600, sent: ["apns": 550, "fcm": 450], tenth: 100, peak: 110),
            run(senders: 2, perSecond: 500, sent: ["apns": 550, "fcm": 449], tenth: 100, peak: 130),
        ]
        report.reach = reach
        let lines = report.table.split(separator: "\n").map(String.init)
        let curves = lines.filter { $0.hasPrefix("| reach: 1,000 devices") }
        #expect(curves.count == 2)
        #expect(curves.first?.contains("50 % 1.20, 90 % 2.00, 99 % 2.40, all 2.50") == true, "\(curves)")
        #expect(curves.first?.contains("sent 1,000 of 1,000 (apns 550, fcm 450), 0 not: met") == true, "\(curves)")
        #expect(curves.last?.contains("sent 999 of 1,000") == true && curves.last?.contains("1 not: NOT met") == true, "\(curves)")
        let rates = lines.filter { $0.hasPrefix("|   pushes/s, publish to last push") }
        // 600 / 689.66 = 0.87.
        #expect(rates.first?.contains("0.87 x the ceiling") == true && rates.first?.contains(">= 0.8 x ceiling: met") == true, "\(rates)")
        #expect(rates.last?.contains("the servers' ceiling is shared") == true, "\(rates)")
        let costs = lines.filter { $0.hasPrefix("|   CPU per push: senders, fan-out") }
        #expect(costs.first?.contains("met (1.10 x)") == true && costs.last?.contains("NOT met (1.30 x)") == true, "\(costs)")
    }
}
