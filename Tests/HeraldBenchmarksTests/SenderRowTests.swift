import Foundation
@testable import HeraldBenchmarks
import Testing

@Suite("The sender rows: APNs, and Web Push with its encryption against pywebpush")
struct SenderRowTests {
    private func sender(platform: String?, perSecond: Double, ceiling: Double?, encryption: BenchmarkReport.Sender.Encryption? = nil)
        -> BenchmarkReport.Sender
    {
        BenchmarkReport.Sender(
            deliveries: 200_000, ceilingPerSecond: ceiling, ceilingCommand: "h2load -n 200000", sendsPerSecond: perSecond, sendSeconds: 20,
            receipts: 200_000, sent: 200_000, extraRequests: 0, baselineRSSBytes: 100 << 20, peakRSSBytes: 200 << 20, cpuSeconds: 12,
            connections: 2, streams: 100, platform: platform, encryption: encryption)
    }

    @Test("each row judges pushes against its server's ceiling; the Web Push row also judges encryption against pywebpush")
    func rows() {
        var report = BenchmarkReportFixture.report(first: 300_000, after: nil, broadcastPerSecond: 240_000)
        report.sender = sender(platform: nil, perSecond: 10_000, ceiling: 16_000)
        report.webPushSender = sender(
            platform: "webpush", perSecond: 3_000, ceiling: 8_000,
            encryption: .init(heraldMicroseconds: 40, pywebpushMicroseconds: 203, pywebpushCommand: "pywebpush"))
        let lines = report.table.split(separator: "\n")
        let apns = lines.first { $0.hasPrefix("| sender: 200,000 deliveries to local APNs") }
        #expect(apns?.contains("0.62 x ceiling") == true && apns?.contains(">= 0.5 x ceiling: met") == true, "\(apns ?? "")")
        let web = lines.first { $0.hasPrefix("| sender: 200,000 deliveries to local Web Push, encrypted") }
        #expect(web?.contains("0.38 x ceiling") == true && web?.contains(">= 0.5 x ceiling: NOT met") == true, "\(web ?? "")")
        let cost = lines.first { $0.hasPrefix("|   encrypting one message, one core: Herald / pywebpush") }
        #expect(cost?.contains("40.0 us / 203.0 us, 5.1 x") == true && cost?.contains(">= 5 x pywebpush: met") == true, "\(cost ?? "")")
        #expect(lines.contains { $0.contains("12.0 s (60 us)") })
    }

    @Test("a report from before Web Push reads without the new members")
    func oldReport() throws {
        let old =
            #"{"deliveries":1,"sendsPerSecond":1,"sendSeconds":1,"receipts":1,"sent":1,"extraRequests":0,"baselineRSSBytes":1,"peakRSSBytes":1,"cpuSeconds":1,"connections":2,"streams":100}"#
        let decoded = try JSONDecoder().decode(BenchmarkReport.Sender.self, from: Data(old.utf8))
        #expect(decoded.platform == nil && decoded.encryption == nil)
    }
}
