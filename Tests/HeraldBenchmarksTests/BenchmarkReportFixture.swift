@testable import HeraldBenchmarks

/// A report with one or two ceilings and one 1M broadcast, for the suites that check how a
/// report judges and prints its measurements.
enum BenchmarkReportFixture {
    static func report(first: Double?, after: Double?, broadcastPerSecond: Double) -> BenchmarkReport {
        func ceiling(_ seen: Double?) -> BenchmarkReport.Ceiling? {
            seen.map {
                BenchmarkReport.Ceiling(
                    records: 400_000, averageRecordBytes: 722, producers: 2, transactions: 16, partitions: 10,
                    transactionalSeconds: 1, transactionalPerSecond: $0 * 1.05, observedSeconds: 1, observedPerSecond: $0,
                    idempotentSeconds: 1, idempotentPerSecond: $0 * 1.7, cpu: nil
                )
            }
        }
        var report = BenchmarkReport(
            runId: "bench-test", startedAt: "2026-11-22T00:00:00Z",
            machine: MachineDescription(
                processors: 2, memoryBytes: 1, cpuModel: "test", kernel: "test", loadAverageAtStart: 0, librdkafka: "test",
                broker: "test", brokerBootstrap: "127.0.0.1:1", redis: "test"
            ),
            settings: BenchmarkReport.Settings(
                registrations: 1_000_000, memorySizes: [], workers: 1, bulkLanesPerWorker: 2, expressLanesPerWorker: 1,
                partitions: 10, slots: 256, tasksPerBroadcast: 16, lingerMs: 25, compression: "lz4", seedPath: "bulk"
            )
        )
        report.ceiling = ceiling(first)
        report.ceilingAfter = ceiling(after)
        report.fanouts = [
            BenchmarkReport.Fanout(
                label: "broadcast", population: 1_000_000, eventId: "e", audience: "broadcast", expected: 1_000_000,
                observed: 1_000_000, firstDeliverySeconds: 0.2, seconds: 1_000_000 / broadcastPerSecond,
                deliveriesPerSecond: broadcastPerSecond, ratioToCeiling: nil,
                cpu: BenchmarkReport.CPUAccount(wallSeconds: 1, workers: 1, broker: 1, redis: 1, benchmark: 1)
            )
        ]
        report.applyCeilingReference()
        return report
    }
}
