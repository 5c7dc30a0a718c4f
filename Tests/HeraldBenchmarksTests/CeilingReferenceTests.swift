@testable import HeraldBenchmarks
import Testing

@Suite("Benchmark ratios and the ceiling they divide by")
struct CeilingReferenceTests {
    private func report(first: Double?, after: Double?, broadcastPerSecond: Double) -> BenchmarkReport {
        BenchmarkReportFixture.report(first: first, after: after, broadcastPerSecond: broadcastPerSecond)
    }

    @Test("the better of the two ceilings is the reference, whichever came first")
    func betterCeilingIsReference() {
        let lowFirst = report(first: 200_000, after: 320_000, broadcastPerSecond: 280_000)
        #expect(lowFirst.ceilingReference == 320_000)
        #expect(lowFirst.fanouts[0].ratioToCeiling == 280_000.0 / 320_000)
        let lowAfter = report(first: 360_000, after: 250_000, broadcastPerSecond: 210_000)
        #expect(lowAfter.ceilingReference == 360_000)
        #expect(lowAfter.fanouts[0].ratioToCeiling == 210_000.0 / 360_000)
    }

    @Test("one ceiling alone is the reference, and no ceiling means no ratio")
    func singleOrNoCeiling() {
        #expect(report(first: 300_000, after: nil, broadcastPerSecond: 240_000).fanouts[0].ratioToCeiling == 0.8)
        let none = report(first: nil, after: nil, broadcastPerSecond: 240_000)
        #expect(none.ceilingReference == nil)
        #expect(none.fanouts[0].ratioToCeiling == nil)
    }

    @Test("the table shows both ceilings against the reference and judges the fan-out by it")
    func tableNamesTheReference() {
        let lines = report(first: 200_000, after: 320_000, broadcastPerSecond: 280_000).table.split(separator: "\n")
        func line(_ start: String) -> Substring? { lines.first { $0.hasPrefix("| \(start)") } }
        let first = line("broker ceiling, transactional, seen by consumer")
        #expect(first?.contains("200,000 rec/s") == true)
        #expect(first?.contains("0.62 x reference") == true)
        let after = line("broker ceiling again, after the fan-outs, transactional, seen by consumer")
        #expect(after?.contains("320,000 rec/s") == true)
        #expect(after?.contains("reference = 1.00 (the better ceiling)") == true)
        #expect(line("broadcast R=1,000,000")?.contains("0.88 x ceiling (>= 0.8: met)") == true)
    }

    @Test("with the commit clock the table names it, and flags counts that differ from the expected one")
    func commitClockRows() {
        var report = report(first: 300_000, after: nil, broadcastPerSecond: 240_000)
        report.ceiling?.clock = "committed"
        report.fanouts[0].clock = "committed"
        report.fanouts[0].committedDeliveries = 1_000_000
        report.fanouts[0].countedSeconds = 6.5
        var lines = report.table.split(separator: "\n")
        func line(_ start: String) -> Substring? { lines.first { $0.hasPrefix("| \(start)") } }
        #expect(line("broker ceiling, transactional, committed") != nil)
        #expect(line("broadcast R=1,000,000 -> 1,000,000 devices, committed")?.contains("0.80 x ceiling (>= 0.8: met)") == true)
        #expect(line("  deliveries read and counted after the clock stopped")?.contains("exactly the expected count") == true)

        report.fanouts[0].observed = 999_999
        report.fanouts[0].committedDeliveries = 999_000
        lines = report.table.split(separator: "\n")
        let broadcast = line("broadcast R=1,000,000")
        #expect(broadcast?.contains("observed 999,999 of 1,000,000") == true)
        #expect(broadcast?.contains("the tasks' commits report 999,000 of 1,000,000") == true)
        #expect(line("  deliveries read and counted after the clock stopped")?.contains("NOT the expected count") == true)
    }

    @Test("the counted deliveries' size is printed next to the ceiling's record size, when it was measured")
    func recordSizesSideBySide() {
        var report = report(first: 300_000, after: nil, broadcastPerSecond: 240_000)
        report.fanouts[0].clock = "committed"
        report.fanouts[0].countedSeconds = 6.5
        func row() -> Substring? {
            report.table.split(separator: "\n").first { $0.hasPrefix("|   deliveries read and counted after the clock stopped") }
        }
        #expect(row()?.contains("B avg") == false)
        report.fanouts[0].averageRecordBytes = 790.4
        #expect(row()?.contains("exactly the expected count; 790 B avg, the ceiling's 722 B") == true)
    }

    @Test("the CPU account splits off librdkafka's threads when they were measured")
    func librdkafkaThreadRows() {
        var report = report(first: 300_000, after: nil, broadcastPerSecond: 240_000)
        func row() -> Substring? {
            report.table.split(separator: "\n").first { $0.hasPrefix("|     of which librdkafka's threads") }
        }
        #expect(row() == nil)
        report.fanouts[0].cpu.workers = 5.2
        report.fanouts[0].cpu.benchmark = 0.6
        report.fanouts[0].cpu.workersLibrdkafka = 3.1
        report.fanouts[0].cpu.benchmarkLibrdkafka = 0.1
        #expect(row()?.contains("3.1 / 0.1") == true)
        #expect(row()?.contains("the callers' threads: 2.1 / 0.5") == true)
    }

    @Test("the host probe is shown with each CPU account, and the ratio is estimated at the reference ceiling's host speed")
    func hostSpeedRows() {
        var report = report(first: 200_000, after: 320_000, broadcastPerSecond: 240_000)
        func line(_ start: String) -> Substring? { report.table.split(separator: "\n").first { $0.hasPrefix("| \(start)") } }
        #expect(line("  the ratio at the reference ceiling's host speed") == nil, "no probe, no estimate")
        report.ceiling?.cpu = BenchmarkReport.CPUAccount(
            wallSeconds: 1, workers: 0, broker: 1, redis: 0, benchmark: 1, hostProbeMilliseconds: 1.0)
        report.ceilingAfter?.cpu = BenchmarkReport.CPUAccount(
            wallSeconds: 1, workers: 0, broker: 1, redis: 0, benchmark: 1, hostProbeMilliseconds: 1.2)
        report.fanouts[0].cpu.hostProbeMilliseconds = 1.6
        // The reference is the after-ceiling (320,000), measured at 1.2 ms; the broadcast ran at 1.6 ms.
        #expect(report.ceilingReferenceHostProbe == 1.2)
        let estimate = report.ratioAtCeilingHostSpeed(report.fanouts[0])
        #expect(estimate.map { abs($0 - 0.75 * 1.6 / 1.2) < 1e-9 } == true)
        #expect(line("  the ratio at the reference ceiling's host speed (estimate)")?.contains("1.00 x ceiling") == true)
        #expect(
            line("  the ratio at the reference ceiling's host speed (estimate)")?.contains(
                "host probe 1.60 ms here, 1.20 ms in the reference ceiling") == true)
        #expect(line("broadcast R=1,000,000")?.contains("0.75 x ceiling (>= 0.8: NOT met)") == true, "the estimate is never judged")
        #expect(report.table.contains("host probe 1.60 ms |"))
    }

    @Test("a narrow expression is shown against the producers alone at its size, and whether they reach the target")
    func sizedCeilingRow() {
        var report = report(first: 500_000, after: nil, broadcastPerSecond: 420_000)
        var narrow = report.fanouts[0]
        narrow.label = "expression `A && B`"
        narrow.audience = "A && B"
        narrow.expected = 20_000
        narrow.observed = 20_000
        narrow.seconds = 0.08
        narrow.deliveriesPerSecond = 250_000
        report.fanouts.append(narrow)
        func row() -> Substring? { report.table.split(separator: "\n").first { $0.hasPrefix("|   the producers alone at this size") } }
        #expect(row() == nil)
        func sized(seconds: Double) -> BenchmarkReport.Ceiling {
            BenchmarkReport.Ceiling(
                records: 20_000, averageRecordBytes: 722, producers: 2, transactions: 2, partitions: 10, transactionalSeconds: seconds,
                transactionalPerSecond: 20_000 / seconds, observedSeconds: seconds, observedPerSecond: 20_000 / seconds, cpu: nil)
        }
        report.fanouts[1].sizedCeiling = sized(seconds: 0.04)
        report.fanouts[1].sizedCeilingRuns = 3
        #expect(row()?.contains("(20,000 records, 2 txns, best of 3)") == true)
        #expect(row()?.contains("40.0 ms, 500,000 rec/s, 1.00 x ceiling") == true)
        #expect(row()?.contains("the ceiling target is within the producers' reach at this size; the row at 0.50 x them") == true)
        report.fanouts[1].sizedCeiling = sized(seconds: 0.08)
        #expect(row()?.contains("0.50 x ceiling") == true)
        #expect(row()?.contains("below 0.8 x ceiling even for the producers alone at this size; the row at 1.00 x them") == true)
    }

    @Test("the probe's median counts only the samples inside the measurement")
    func probeMedianWindow() {
        let start = ContinuousClock.now
        let samples = [1.0, 1.5, 2.0, 3.0, 5.0].enumerated().map { index, milliseconds in
            HostSpeedProbe.Sample(at: start.advanced(by: .milliseconds(100 * index)), milliseconds: milliseconds)
        }
        #expect(HostSpeedProbe.median(of: samples, from: start, to: start.advanced(by: .milliseconds(300))) == 1.75)
        #expect(
            HostSpeedProbe.median(of: samples, from: start.advanced(by: .milliseconds(50)), to: start.advanced(by: .milliseconds(250)))
                == 1.75)
        #expect(
            HostSpeedProbe.median(of: samples, from: start.advanced(by: .milliseconds(150)), to: start.advanced(by: .milliseconds(450)))
                == 3.0)
        #expect(HostSpeedProbe.median(of: samples, from: start.advanced(by: .seconds(1)), to: start.advanced(by: .seconds(2))) == nil)
    }

    @Test("the probe's work is deterministic for a seed and costs thread CPU time")
    func probeWork() {
        var first = [UInt64](repeating: 0, count: HostSpeedProbe.tableEntries)
        var second = first
        #expect(HostSpeedProbe.work(&first, seed: 42) == HostSpeedProbe.work(&second, seed: 42))
        #expect(first == second)
        #expect(first.contains { $0 != 0 })
        #expect(HostSpeedProbe.measure(&first) > 0)
    }

    @Test("a capped hub's broadcast is judged against the same broadcast of the hub without caps, by its number")
    func capOverheadRow() {
        var report = report(first: 300_000, after: nil, broadcastPerSecond: 240_000)
        func fanout(_ index: Int, rules: String?, seconds: Double) -> BenchmarkReport.Fanout {
            var row = report.fanouts[0]
            row.label = PopulationPhase.capsLabel(index, rules: rules)
            row.seconds = seconds
            return row
        }
        report.fanouts += [
            fanout(3, rules: nil, seconds: 4.0), fanout(2, rules: nil, seconds: 5.0), fanout(2, rules: "10/86400:bulk", seconds: 5.1),
            fanout(3, rules: "10/86400:bulk", seconds: 4.8),
        ]
        let lines = report.table.split(separator: "\n")
        func line(_ start: String) -> Substring? { lines.first { $0.hasPrefix("| \(start)") } }
        #expect(line("bulk broadcast 2, hub capped 10/86400:bulk")?.contains("1.02 x the time without caps (<= 1.05: met)") == true)
        #expect(line("bulk broadcast 3, hub capped 10/86400:bulk")?.contains("1.20 x the time without caps (<= 1.05: NOT met)") == true)
        #expect(line("bulk broadcast 3, hub without caps")?.contains("the time without caps") == false)
        // The pairs' median: the middle of 1.02 and 1.20 is over the target.
        #expect(report.capOverheads.map { ($0.ratio * 100).rounded() } == [102, 120])
        func summary() -> Substring? {
            report.table.split(separator: "\n").first { $0.hasPrefix("| frequency caps: capped over uncapped broadcast") }
        }
        #expect(summary()?.contains("median of 2 undisturbed pairs") == true)
        #expect(summary()?.contains("1.11 x (pairs 1.02, 1.20)") == true && summary()?.contains("NOT met") == true)
        report.fanouts += [fanout(4, rules: nil, seconds: 4.0), fanout(4, rules: "10/86400:bulk", seconds: 4.0)]
        #expect(summary()?.contains("median of 3 undisturbed pairs") == true && summary()?.contains("1.02 x") == true)
        #expect(summary()?.contains(": met") == true)
        // A pair that other processes disturbed is listed and left out of the median.
        var disturbed = fanout(5, rules: "10/86400:bulk", seconds: 8.0)
        disturbed.cpu.wallSeconds = 8.0
        disturbed.cpu.machine = disturbed.cpu.total + 4.0
        report.fanouts += [fanout(5, rules: nil, seconds: 4.0), disturbed]
        #expect(summary()?.contains("median of 3 undisturbed pairs") == true)
        #expect(summary()?.contains("pairs 1.02, 1.20, 1.00, 2.00 disturbed)") == true)
    }

    @Test("another hub's breaking alert is judged against itself alone, and only while the load still ran")
    func hubIsolationRows() {
        var report = report(first: 300_000, after: nil, broadcastPerSecond: 240_000)
        report.isolation = [
            BenchmarkReport.HubIsolation(
                load: "a broadcast to 1,000,000 in the main hub", alertAudience: 100_000, aloneSeconds: 0.40, duringSeconds: 0.56,
                loadSecondsAfterAlert: 2.5, alertDelivered: 100_000, loadAudience: 1_000_000, loadDelivered: 1_000_000),
            BenchmarkReport.HubIsolation(
                load: "a flood of 300,000 registrations into a third hub", alertAudience: 100_000, aloneSeconds: 0.40,
                duringSeconds: 0.70, loadSecondsAfterAlert: 3.0, alertDelivered: 99_999, loadAudience: nil, loadDelivered: nil),
            BenchmarkReport.HubIsolation(
                load: "a flood of 1,000 registrations into a third hub", alertAudience: 100_000, aloneSeconds: 0.40,
                duringSeconds: 0.41, loadSecondsAfterAlert: 0.2, alertDelivered: 100_000, loadAudience: nil, loadDelivered: nil),
        ]
        let lines = report.table.split(separator: "\n")
        let rows = lines.filter { $0.hasPrefix("| another hub's breaking alert") }
        #expect(rows.count == 3)
        #expect(rows.first?.contains("during a broadcast to 1,000,000 in the main hub") == true)
        #expect(rows.first?.contains("0.56 s, alone 0.40 s: 1.40 x") == true && rows.first?.contains(": met") == true)
        #expect(rows.dropFirst().first?.contains("1.75 x") == true && rows.dropFirst().first?.contains("NOT met") == true)
        // Fast enough, but the flood was over before the alert was: not a measurement under load.
        #expect(rows.last?.contains("NOT met (the load ended first)") == true)
        let counted = lines.filter { $0.hasPrefix("|   the load ran on for / deliveries counted") }
        #expect(counted.count == 3)
        #expect(counted.first?.contains("broadcast 1,000,000 of 1,000,000") == true && counted.first?.contains("exact: met") == true)
        #expect(counted.dropFirst().first?.contains("alert 99,999 of 100,000") == true)
        #expect(counted.dropFirst().first?.contains("exact: NOT met") == true)
        // One row per load: no median yet.
        #expect(!report.table.contains("median of"))

        // Pairs of one load: judged by the median of the pairs whose load outlasted the alert.
        func pair(_ index: Int, alone: Double, during: Double, loaded: Bool = true) -> BenchmarkReport.HubIsolation {
            BenchmarkReport.HubIsolation(
                load: "a flood of registrations into a third hub through the API's write path", alertAudience: 100_000,
                aloneSeconds: alone, duringSeconds: during, loadSecondsAfterAlert: loaded ? during + 1 : 0, alertDelivered: 100_000,
                loadAudience: nil, loadDelivered: nil, loadPerSecondBefore: 1_400, loadPerSecondDuring: 20, pair: index)
        }
        report.isolation = [
            pair(1, alone: 0.5, during: 0.9), pair(2, alone: 0.5, during: 0.6), pair(3, alone: 0.5, during: 0.65),
            pair(4, alone: 0.5, during: 0.3, loaded: false),
        ]
        let pairLines = report.table.split(separator: "\n")
        #expect(pairLines.contains { $0.hasPrefix("| another hub's breaking alert to 100,000 during a flood") && $0.contains("(pair 2)") })
        #expect(pairLines.contains { $0.contains("writes/s before the alert 1,400, during it 20") })
        let median = pairLines.first { $0.hasPrefix("| another hub's breaking alert during a flood") }
        #expect(median?.contains("median of 3 pairs") == true)
        #expect(median?.contains("1.30 x (pairs 1.80, 1.20, 1.30, 0.60 unloaded)") == true)
        #expect(median?.contains("<= 1.5 x alone: met") == true)
    }
}
