import Foundation
@testable import HeraldBenchmarks
import Testing

@Suite("The idle row: what an idle worker and API cost")
struct IdleRowTests {
    /// 60 s with nothing to do: the worker and the API took `worker` and `api` CPU seconds, the
    /// broker 4.08 and Redis 0.18; other processes `others` cores.
    private func idle(worker: Double, api: Double, others: Double = 0) -> BenchmarkReport.Idle {
        let own = worker + api + 4.08 + 0.18 + 0.01
        return BenchmarkReport.Idle(
            workerRoles: "planner,fanout,indexer,scheduler", plannerFetchWaitMs: 500, taskFetchWaitMs: 500, warmupSeconds: 61.2,
            workerCPUSeconds: worker, apiCPUSeconds: api,
            cpu: BenchmarkReport.CPUAccount(
                wallSeconds: 60, workers: worker + api, broker: 4.08, redis: 0.18, benchmark: 0.01, machine: own + others * 60)
        )
    }

    private func lines(_ idle: BenchmarkReport.Idle) -> [Substring] {
        var report = BenchmarkReportFixture.report(first: 300_000, after: nil, broadcastPerSecond: 240_000)
        report.idle = idle
        return report.table.split(separator: "\n")
    }

    @Test("each process as a share of one core")
    func percentOfCore() {
        let measured = idle(worker: 1.2, api: 0.21)
        #expect(abs(measured.workerPercentOfCore - 2.0) < 1e-9)
        #expect(abs(measured.apiPercentOfCore - 0.35) < 1e-9)
        #expect(abs(measured.heraldPercentOfCore - 2.35) < 1e-9)
        #expect(abs((measured.brokerPercentOfCore ?? 0) - 6.8) < 1e-9)
        #expect(abs((measured.redisPercentOfCore ?? 0) - 0.3) < 1e-9)
        var unknown = measured
        unknown.cpu.broker = nil
        #expect(unknown.brokerPercentOfCore == nil)
    }

    @Test("the row judges the worker and the API together against 1 % of a core, with the broker, Redis and the fetch waits below it")
    func tableRows() {
        let over = lines(idle(worker: 1.2, api: 0.21))
        let row = over.first { $0.hasPrefix("| idle Herald: worker (planner,fanout,indexer,scheduler) + API, 60 s after a 61 s warm-up") }
        #expect(row?.contains("2.35 % of a core (worker 2.00 + API 0.35)") == true)
        #expect(row?.contains("< 1 % of a core: NOT met") == true)
        #expect(row?.contains("disturbed") == false)
        let servers = over.first { $0.hasPrefix("|   idle: broker / Redis") }
        #expect(servers?.contains("6.80 / 0.30 % of a core") == true)
        #expect(servers?.contains("the production fetch waits (Herald's defaults): planner 500 ms, task lanes 500 ms") == true)

        let under = lines(idle(worker: 0.36, api: 0.12))
        let met = under.first { $0.hasPrefix("| idle Herald:") }
        #expect(met?.contains("0.80 % of a core (worker 0.60 + API 0.20)") == true)
        #expect(met?.contains("< 1 % of a core: met") == true)
    }

    @Test("a disturbed idle measurement is flagged in its row and among the run's disturbed measurements")
    func disturbed() {
        let measured = idle(worker: 0.36, api: 0.12, others: 0.3)
        let row = lines(measured).first { $0.hasPrefix("| idle Herald:") }
        #expect(row?.contains("< 1 % of a core: met; disturbed: other processes took 0.30 cores") == true)
        var report = BenchmarkReportFixture.report(first: 300_000, after: nil, broadcastPerSecond: 240_000)
        report.idle = measured
        #expect(report.disturbedMeasurements == ["idle Herald: other processes 0.30 cores"])
    }

    @Test("a run without the idle row prints none, and the row survives the JSON")
    func absentAndCodable() throws {
        var report = BenchmarkReportFixture.report(first: 300_000, after: nil, broadcastPerSecond: 240_000)
        #expect(!report.table.contains("idle Herald"))
        report.idle = idle(worker: 1.2, api: 0.21)
        let decoded = try JSONDecoder().decode(BenchmarkReport.self, from: JSONEncoder().encode(report))
        #expect(decoded.idle == report.idle)
    }
}
