@testable import HeraldBenchmarks
import Synchronization
import Testing

@Suite("Measurements that other processes disturbed, and the wait for a quiet machine")
struct DisturbedMeasurementTests {
    /// One second of a measurement whose own parties took 3 CPU-s, and the machine `others` more.
    private func account(others: Double) -> BenchmarkReport.CPUAccount {
        BenchmarkReport.CPUAccount(wallSeconds: 1, workers: 1, broker: 1, redis: 0.5, benchmark: 0.5, machine: 3 + others)
    }

    @Test("other processes taking a tenth of a core or more disturb a measurement")
    func threshold() {
        #expect(abs((account(others: 0.3).othersCores ?? 0) - 0.3) < 1e-9)
        #expect(account(others: 0.3).isDisturbed)
        #expect(account(others: 0.12).isDisturbed)
        #expect(!account(others: 0.04).isDisturbed)
        let unknown = BenchmarkReport.CPUAccount(wallSeconds: 1, workers: 1, broker: 1, redis: 1, benchmark: 1)
        #expect(unknown.othersCores == nil)
        #expect(!unknown.isDisturbed)
    }

    @Test("the table and the report name a disturbed fan-out and leave quiet measurements alone")
    func tableFlagsDisturbed() {
        var report = BenchmarkReportFixture.report(first: 300_000, after: 320_000, broadcastPerSecond: 288_000)
        report.ceiling?.cpu = account(others: 0.02)
        report.fanouts[0].cpu = account(others: 0.3)
        report.fanouts[0].cpu.quietWaitSeconds = 2.5
        let lines = report.table.split(separator: "\n")
        let broadcast = lines.first { $0.hasPrefix("| broadcast R=1,000,000") }
        #expect(broadcast?.contains("0.90 x ceiling (>= 0.8: met); <= 5 s: met; disturbed: other processes took 0.30 cores") == true)
        let cpuRows = lines.filter { $0.hasPrefix("|   CPU s:") }
        #expect(cpuRows.count == 2)
        #expect(cpuRows.first?.contains("DISTURBED") == false)
        #expect(cpuRows.last?.contains("DISTURBED: run 3.00 + others 0.30 of 2 cores") == true)
        #expect(cpuRows.last?.contains("waited 2.5 s for quiet") == true)
        #expect(report.disturbedMeasurements == ["broadcast R=1000000: other processes 0.30 cores"])

        report.fanouts[0].cpu = account(others: 0.0)
        #expect(report.disturbedMeasurements.isEmpty)
        #expect(!report.table.contains("isturbed"))
    }

    @Test("the wait ends when other processes go quiet, at its limit, or when the machine cannot be read")
    func waitForQuiet() async {
        let calls = Mutex(0)
        let levels: [Double] = [0.6, 0.3, 0.01, 0.9]
        _ = await CPUMeter.waitForQuiet(threshold: 0.05, limit: .seconds(60)) {
            calls.withLock { count in
                defer { count += 1 }
                return levels[count]
            }
        }
        #expect(calls.withLock { $0 } == 3)

        calls.withLock { $0 = 0 }
        let waited = await CPUMeter.waitForQuiet(threshold: 0.05, limit: .milliseconds(50)) {
            calls.withLock { $0 += 1 }
            try? await Task.sleep(for: .milliseconds(10))
            return 0.5
        }
        // Never quiet: only the limit ends it (however slowly a loaded machine runs the samples).
        #expect(waited >= 0.05)
        #expect(calls.withLock { $0 } >= 1)

        calls.withLock { $0 = 0 }
        _ = await CPUMeter.waitForQuiet(threshold: 0.05, limit: .seconds(60)) {
            calls.withLock { $0 += 1 }
            return nil
        }
        #expect(calls.withLock { $0 } == 1)
    }
}
