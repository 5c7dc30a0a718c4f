import Foundation
import HeraldDomain
import HeraldKafka
import HeraldPipeline
import HeraldRedis
import HeraldRegistry
import HeraldStreams

extension PopulationPhase.Context {
    /// `count` broadcasts, each between two ceilings of its own: ceiling, broadcast,
    /// ceiling, broadcast, ..., ceiling (`BenchmarkReport.Rounds`). With `expression` (its
    /// expected deliveries), each broadcast is followed by a ceiling and the expression.
    ///
    /// While a ceiling is timed (about a second) the workers are stopped (`SIGSTOP`) and this
    /// phase's readers paused, so it runs as alone as the run's first ceiling, which runs
    /// before any worker exists: an idle worker's and an idle reader's 5 ms fetches cost
    /// the broker up to a tenth of a core each (docs/performance.md, "The embedded broker").
    func rounds(_ count: Int, expected: Int, expression: Int?, ceiling: PopulationPhase.RoundCeiling) async throws -> BenchmarkReport.Rounds
    {
        var runs: [(label: String, event: NotificationEvent, expected: Int)] = []
        for round in 1...count {
            if options.roundBroadcasts || expression == nil {
                runs.append(("round \(round) broadcast", BenchmarkEvents.broadcast(id: "\(prefix)-round-\(round)"), expected))
            }
            if let expression {
                let event = try BenchmarkEvents.expression(id: "\(prefix)-round-\(round)x", source: options.expression)
                runs.append(("round \(round) expression", event, expression))
            }
        }
        var rounds = BenchmarkReport.Rounds()
        Console.say(
            "  rounds: \(runs.count) fan-outs (\(expression == nil ? "broadcasts" : options.roundBroadcasts ? "broadcasts and expressions" : "expressions")), each between two ceilings of its own"
        )
        let workers = workers
        let watcher = watcher
        let commits = commits
        let aroundTimed: @Sendable (Bool) -> Void = { starting in
            if starting {
                try? watcher.readBulkPartitions(false)
                try? commits.read(false)
                for worker in workers { worker.suspend() }
            } else {
                for worker in workers { worker.resume() }
                try? commits.read(true)
                // The `seen` clock reads the deliveries while a broadcast runs; the
                // `committed` one pauses them again when its broadcast starts.
                try? watcher.readBulkPartitions(true)
            }
        }
        for index in 0...runs.count {
            // The records carry the id of the fan-out next to them: as long as its deliveries.
            let measured = try await ceiling(index, runs[min(index, runs.count - 1)].event.id!, workers, aroundTimed)
            Console.say("  round ceiling \(index + 1): \(Console.count(Int(measured.referencePerSecond))) records/s")
            rounds.ceilings.append(measured)
            if index < runs.count {
                rounds.fanouts.append(
                    try await fanout(label: runs[index].label, event: runs[index].event, expected: runs[index].expected))
            }
        }
        rounds.applyNeighbours()
        func list(_ values: [Double]) -> String { values.map { Console.fixed($0, 2) }.joined(separator: ", ") }
        Console.say("  rounds: ratios \(list(rounds.ratios)), median \(rounds.medianRatio.map { Console.fixed($0, 2) } ?? "-")")
        if expression != nil {
            Console.say(
                "  rounds: the expression's ratios \(list(rounds.expressionRatios)), its time per delivery over the broadcast's before it \(list(rounds.expressionCosts))"
            )
        }
        return rounds
    }
}
