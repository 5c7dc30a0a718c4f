import Foundation
@testable import HeraldBenchmarks
import Testing

@Suite("Broadcast rounds, each between two ceilings of its own")
struct RoundsTests {
    private func ceiling(_ perSecond: Double, probe: Double? = nil, others: Double = 0) -> BenchmarkReport.Ceiling {
        BenchmarkReport.Ceiling(
            records: 400_000, averageRecordBytes: 790, producers: 2, transactions: 16, partitions: 10,
            transactionalSeconds: 400_000 / perSecond, transactionalPerSecond: perSecond * 1.02,
            observedSeconds: 400_000 / perSecond, observedPerSecond: perSecond, idempotentSeconds: nil, idempotentPerSecond: nil,
            cpu: BenchmarkReport.CPUAccount(
                wallSeconds: 1, workers: 0, broker: 0.5, redis: 0, benchmark: 1, machine: 1.5 + others, hostProbeMilliseconds: probe
            ),
            clock: "committed"
        )
    }

    private func broadcast(_ index: Int, perSecond: Double, observed: Int = 1_000_000) -> BenchmarkReport.Fanout {
        BenchmarkReport.Fanout(
            label: "round \(index) broadcast", population: 1_000_000, eventId: "r-\(index)", audience: "broadcast",
            expected: 1_000_000, observed: observed, firstDeliverySeconds: 0.1, seconds: 1_000_000 / perSecond,
            deliveriesPerSecond: perSecond, ratioToCeiling: nil,
            cpu: BenchmarkReport.CPUAccount(wallSeconds: 1, workers: 1, broker: 1, redis: 0.2, benchmark: 0.1),
            clock: "committed", committedDeliveries: 1_000_000
        )
    }

    private func rounds(ceilings: [Double], broadcasts: [Double]) -> BenchmarkReport.Rounds {
        var rounds = BenchmarkReport.Rounds(
            ceilings: ceilings.map { ceiling($0) },
            fanouts: broadcasts.enumerated().map { broadcast($0.offset + 1, perSecond: $0.element) }
        )
        rounds.applyNeighbours()
        return rounds
    }

    @Test("each broadcast is divided by the better of the two ceilings around it")
    func betterNeighbour() {
        let measured = rounds(ceilings: [600_000, 500_000, 700_000, 650_000], broadcasts: [480_000, 560_000, 520_000])
        let expected: [Double] = [480_000.0 / 600_000, 560_000.0 / 700_000, 520_000.0 / 700_000]
        #expect(measured.ratios == expected)
        #expect(measured.neighbourReference(0) == 600_000)
        #expect(measured.neighbourReference(2) == 700_000)
        #expect(measured.neighbourReference(3) == nil)
    }

    @Test("the median is the middle ratio, or the mean of the middle two")
    func median() {
        let odd = rounds(ceilings: [500_000, 500_000, 500_000, 500_000], broadcasts: [450_000, 350_000, 400_000])
        #expect(odd.medianRatio == 0.8)
        let even = rounds(ceilings: [500_000, 500_000, 500_000], broadcasts: [300_000, 450_000])
        #expect(even.medianRatio.map { abs($0 - 0.75) < 1e-12 } == true)
        #expect(BenchmarkReport.Rounds().medianRatio == nil)
    }

    @Test("a broadcast whose second ceiling is missing has no ratio and does not count")
    func missingNeighbour() {
        let cut = rounds(ceilings: [500_000, 500_000], broadcasts: [400_000, 450_000])
        #expect(cut.fanouts[1].ratioToCeiling == nil)
        #expect(cut.ratios == [0.8])
        #expect(cut.medianRatio == 0.8)
    }

    @Test("the table judges the median and prints every round with its neighbours and probes")
    func tableRows() throws {
        var report = BenchmarkReportFixture.report(first: 700_000, after: nil, broadcastPerSecond: 500_000)
        func line(_ start: String) -> Substring? { report.table.split(separator: "\n").first { $0.hasPrefix("| \(start)") } }
        #expect(line("broadcast rounds") == nil, "no rounds, no rows")

        report.rounds = rounds(ceilings: [600_000, 500_000, 700_000, 650_000], broadcasts: [480_000, 560_000, 520_000])
        report.rounds?.ceilings[0].cpu?.hostProbeMilliseconds = 1.1
        report.rounds?.fanouts[0].cpu.hostProbeMilliseconds = 1.2
        let header = try #require(line("broadcast rounds, each between two ceilings of its own (3)"))
        #expect(header.contains("median 0.80 x (0.80, 0.80, 0.74)"))
        #expect(header.contains("median >= 0.8: met"))
        let first = try #require(line("  round 1: ceiling before / broadcast / ceiling after"))
        #expect(first.contains("600,000 rec/s / 2.08 s, 480,000/s / 500,000 rec/s"))
        #expect(first.contains("0.80 x the better neighbour; host probe 1.10 / 1.20 / ? ms"))
        // The main broadcast keeps its own ratio against the run's better ceiling.
        #expect(line("broadcast R=1,000,000")?.contains("0.71 x ceiling (>= 0.8: NOT met)") == true)

        report.rounds = rounds(ceilings: [600_000, 600_000, 600_000, 600_000], broadcasts: [420_000, 600_000, 450_000])
        #expect(line("broadcast rounds")?.contains("median 0.75 x (0.70, 1.00, 0.75)") == true)
        #expect(line("broadcast rounds")?.contains("median >= 0.8: NOT met") == true)
    }

    @Test("a round with a wrong count or a disturbed neighbour says so, and the report lists it")
    func suspectRounds() throws {
        var report = BenchmarkReportFixture.report(first: 700_000, after: nil, broadcastPerSecond: 500_000)
        var measured = rounds(ceilings: [600_000, 600_000], broadcasts: [540_000])
        measured.ceilings[1] = ceiling(600_000, others: 0.4)
        measured.fanouts[0].observed = 999_998
        measured.fanouts[0].committedDeliveries = 999_000
        report.rounds = measured
        let row = try #require(report.table.split(separator: "\n").first { $0.hasPrefix("|   round 1:") })
        #expect(row.contains("ceiling after disturbed: other processes took 0.40 cores"))
        #expect(!row.contains("ceiling before disturbed"))
        #expect(row.contains("observed 999,998 of 1,000,000"))
        #expect(row.contains("the tasks' commits report 999,000 of 1,000,000"))
        #expect(report.disturbedMeasurements == ["ceiling 2 of the rounds: other processes 0.40 cores"])
    }

    /// Rounds of a broadcast then the expression, ceilings between all of them.
    private func mixedRounds(ceilings: [Double], pairs: [(broadcast: Double, expression: Double)]) -> BenchmarkReport.Rounds {
        var fanouts: [BenchmarkReport.Fanout] = []
        for (index, pair) in pairs.enumerated() {
            fanouts.append(broadcast(index + 1, perSecond: pair.broadcast))
            var expression = broadcast(index + 1, perSecond: pair.expression, observed: 416_575)
            expression.label = "round \(index + 1) expression"
            expression.audience = "(World || Politics) && !Sports"
            expression.expected = 416_575
            expression.committedDeliveries = 416_575
            fanouts.append(expression)
        }
        var rounds = BenchmarkReport.Rounds(ceilings: ceilings.map { ceiling($0) }, fanouts: fanouts)
        rounds.applyNeighbours()
        return rounds
    }

    @Test("with expression rounds, the broadcasts and the expressions get medians of their own")
    func expressionRounds() {
        let measured = mixedRounds(
            ceilings: [600_000, 600_000, 500_000, 500_000, 600_000],
            pairs: [(480_000, 450_000), (500_000, 400_000)])
        #expect(measured.ratios == [0.8, 1.0], "the broadcasts only")
        #expect(measured.expressionRatios == [0.75, 400_000.0 / 600_000])
        #expect(measured.expressionCosts == [480_000.0 / 450_000, 1.25])
        #expect(measured.expressionMedianCost.map { abs($0 - (480_000.0 / 450_000 + 1.25) / 2) < 1e-12 } == true)
        #expect(rounds(ceilings: [600_000, 600_000], broadcasts: [480_000]).expressionCosts.isEmpty)
    }

    @Test("the expression rounds' row judges the ceiling ratio, or the cost per delivery when the broadcasts are below target")
    func expressionRoundRows() throws {
        var report = BenchmarkReportFixture.report(first: 700_000, after: nil, broadcastPerSecond: 500_000)
        func line(_ start: String) -> Substring? { report.table.split(separator: "\n").first { $0.hasPrefix("| \(start)") } }
        // Broadcasts at 0.80 and 0.70 of their ceilings (median 0.75), expressions at 1.05-1.2 x their time per delivery.
        report.rounds = mixedRounds(ceilings: Array(repeating: 600_000, count: 5), pairs: [(480_000, 457_143), (420_000, 350_000)])
        let row = try #require(line("expression `(World || Politics) && !Sports` rounds, each after its round's broadcast (2)"))
        #expect(row.contains("median 0.67 x (0.76, 0.58)"))
        #expect(row.contains("time per delivery over the broadcast's before it: median 1.12 x (1.05, 1.20)"))
        #expect(row.contains("the broadcasts' median below 0.8, so median <= 1.1 x the broadcast's: NOT met"))
        #expect(line("broadcast rounds, each between two ceilings of its own (2)") != nil)
        #expect(line("  round 2: ceiling before / expression / ceiling after")?.contains("350,000/s") == true)

        report.rounds = mixedRounds(ceilings: Array(repeating: 600_000, count: 5), pairs: [(480_000, 457_143), (420_000, 400_000)])
        #expect(line("expression `")?.contains("so median <= 1.1 x the broadcast's: met") == true)

        report.rounds = mixedRounds(ceilings: Array(repeating: 500_000, count: 5), pairs: [(480_000, 420_000), (450_000, 400_000)])
        #expect(line("expression `")?.contains("median >= 0.8: met") == true, "0.84 and 0.80 of the ceiling, whatever the broadcast")
    }

    @Test("expression rounds without broadcasts are judged by their ratio to the ceilings alone, each its own round")
    func expressionOnlyRounds() throws {
        var report = BenchmarkReportFixture.report(first: 700_000, after: nil, broadcastPerSecond: 500_000)
        func line(_ start: String) -> Substring? { report.table.split(separator: "\n").first { $0.hasPrefix("| \(start)") } }
        var fanouts = mixedRounds(ceilings: [1, 1, 1, 1, 1], pairs: [(1, 450_000), (1, 350_000)]).fanouts
        fanouts.removeAll(where: BenchmarkReport.Rounds.isBroadcast)
        var measured = BenchmarkReport.Rounds(ceilings: [500_000, 600_000, 500_000].map { ceiling($0) }, fanouts: fanouts)
        measured.applyNeighbours()
        #expect(measured.ratios.isEmpty)
        #expect(measured.expressionRatios == [0.75, 350_000.0 / 600_000])
        #expect(measured.expressionCosts.isEmpty)
        report.rounds = measured
        let row = try #require(line("expression `(World || Politics) && !Sports` rounds, each between two ceilings of its own (2)"))
        #expect(row.contains("median 0.67 x (0.75, 0.58)"))
        #expect(row.contains("median >= 0.8: NOT met"))
        #expect(!row.contains("broadcast's"))
        #expect(line("broadcast rounds") == nil)
        #expect(line("  round 2: ceiling before / expression / ceiling after")?.contains("350,000/s") == true)
    }

    @Test("a ceiling measured without its idempotent run prints no idempotent row, and reports round-trip through JSON")
    func transactionalOnlyCeiling() throws {
        var report = BenchmarkReportFixture.report(first: 700_000, after: nil, broadcastPerSecond: 500_000)
        func idempotentRows() -> Int { report.table.split(separator: "\n").filter { $0.contains("idempotent, no transactions") }.count }
        #expect(idempotentRows() == 1)
        report.ceiling?.idempotentSeconds = nil
        report.ceiling?.idempotentPerSecond = nil
        #expect(idempotentRows() == 0)

        report.rounds = rounds(ceilings: [600_000, 500_000], broadcasts: [450_000])
        let decoded = try JSONDecoder().decode(BenchmarkReport.self, from: JSONEncoder().encode(report))
        #expect(decoded.rounds == report.rounds)
        #expect(decoded.rounds?.medianRatio == 0.75)
        #expect(decoded.ceiling?.idempotentPerSecond == nil)
    }
}
