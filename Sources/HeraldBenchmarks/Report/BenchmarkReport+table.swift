import Foundation
import HeraldDomain

extension BenchmarkReport {
    /// Targets from issue 4 (docs/performance.md). Checked here, never asserted in tests.
    public enum Target {
        public static let ratioToCeiling = 0.8
        public static let millionBroadcastSeconds = 5.0
        public static let idleP99Milliseconds = 25.0
        public static let loadedP99Milliseconds = 250.0
        public static let peakRSSBytes = 300 * 1_048_576
        /// Time per delivery at the largest population over the next smaller one.
        public static let perDeliveryGrowth = 1.2
        public static let releaseP99Milliseconds = 1_000.0
        /// The sender's pushes per second against the local APNs server's own ceiling.
        public static let senderRatioToCeiling = 0.5
        /// An expression's time per delivery against the broadcast's in the same run, when
        /// the broadcast itself is below `ratioToCeiling`.
        public static let expressionCostToBroadcast = 1.1
        /// An idle worker (default roles) and API together, in percent of one core.
        public static let idleHeraldPercentOfCore = 1.0
        /// Herald's Web Push encryption against pywebpush's, per message on one core.
        public static let webPushEncryptionSpeedup = 5.0
        /// A broadcast over thousands of distinct templates against the same broadcast over the
        /// seed's few (`--template-variants`), in time.
        public static let templateDiversityCost = 1.5
        /// A broadcast in a hub with frequency caps (counting the alerts before it) against the
        /// same broadcast in a hub without, in time: "a few percent".
        public static let capOverhead = 1.05
        /// From stopping a broadcast in flight until its last task reported, in seconds.
        public static let stopSeconds = 1.0
        /// A breaking event during a bulk broadcast against the same event alone, in time.
        public static let preemptionCost = 1.5
        /// A hub's breaking alert while another hub broadcasts or is flooded with registrations
        /// against the same alert alone, in time.
        public static let hubIsolationCost = 1.5
        /// A rehearsal of a million-device broadcast, from the publish to its last task's report.
        public static let rehearsalSeconds = 1.0
        /// A reach row with one sender worker: pushes per second, publish to last push, against
        /// the local servers' ceiling for the row's mix of APNs and FCM.
        public static let reachRatioToCeiling = 0.8
        /// A sender's peak RSS over a broadcast against its RSS once a tenth was pushed.
        public static let senderRSSGrowth = 1.2
    }

    /// Rows of one ceiling measurement, each rate against the reference of every ratio.
    private func ceilingRows(_ title: String, _ ceiling: Ceiling, reference: Double) -> [(String, String, String)] {
        func relative(_ rate: Double) -> String {
            rate == reference ? "reference = 1.00 (the better ceiling)" : "\(Console.fixed(rate / reference, 2)) x reference"
        }
        var rows: [(String, String, String)] = []
        if let observed = ceiling.observedPerSecond {
            let clock = ceiling.clock == BenchmarkOptions.Clock.committed.rawValue ? "committed" : "seen by consumer"
            rows.append(
                (
                    "\(title), transactional, \(clock) (\(ceiling.producers) producers, \(ceiling.transactions) txns)",
                    "\(Console.count(Int(observed))) rec/s (\(Console.fixed(ceiling.averageRecordBytes, 0)) B avg)",
                    relative(observed)
                ))
        }
        rows.append(
            (
                "\(title), transactional, until last commit", "\(Console.count(Int(ceiling.transactionalPerSecond))) rec/s",
                relative(ceiling.transactionalPerSecond)
            ))
        if let cpu = ceiling.cpu { rows.append(contentsOf: cpuRows(cpu)) }
        if let idempotent = ceiling.idempotentPerSecond {
            rows.append(("\(title), idempotent, no transactions", "\(Console.count(Int(idempotent))) rec/s", relative(idempotent)))
        }
        return rows
    }

    /// The first template-diversity broadcast of the same kind (first or again) when `fanout` is
    /// a later one: what its time is judged against.
    private func templateBaseline(of fanout: Fanout) -> Fanout? {
        let prefix = "broadcast over "
        guard fanout.label.hasPrefix(prefix) else { return nil }
        let again = fanout.label.hasSuffix(", again")
        let first = fanouts.first { $0.label.hasPrefix(prefix) && $0.label.hasSuffix(", again") == again }
        return first?.eventId == fanout.eventId ? nil : first
    }

    /// Per load of the hub isolation rows measured in pairs: the median of the pairs' ratios,
    /// leaving out a pair whose load ended before the alert did.
    private func isolationSummaryRows() -> [(String, String, String)] {
        var loads: [String] = []
        for entry in isolation where !loads.contains(entry.load) { loads.append(entry.load) }
        return loads.compactMap { load in
            let pairs = isolation.filter { $0.load == load }
            guard pairs.count > 1 else { return nil }
            let ratios = pairs.filter(\.wasLoaded).map(\.ratio)
            let median = Rounds.median(ratios)
            return (
                "another hub's breaking alert during \(load): median of \(ratios.count) pairs",
                (median.map { Console.fixed($0, 2) + " x" } ?? "-")
                    + " (pairs \(pairs.map { Console.fixed($0.ratio, 2) + ($0.wasLoaded ? "" : " unloaded") }.joined(separator: ", ")))",
                "<= \(Console.fixed(Target.hubIsolationCost, 1)) x alone: "
                    + (median.map { Self.verdict($0 <= Target.hubIsolationCost) } ?? "not measured: the load ended first every time")
            )
        }
    }

    /// Each capped broadcast's time over its pair's without caps, in the order they ran, and
    /// whether other processes disturbed either of the two.
    public var capOverheads: [(ratio: Double, disturbed: Bool)] {
        fanouts.compactMap { fanout in
            uncappedBaseline(of: fanout).map {
                ($0.seconds > 0 ? fanout.seconds / $0.seconds : 0, fanout.cpu.isDisturbed || $0.cpu.isDisturbed)
            }
        }
    }

    /// The broadcast of the hub without caps that a capped hub's broadcast is compared with.
    private func uncappedBaseline(of fanout: Fanout) -> Fanout? {
        guard let range = fanout.label.range(of: ", hub capped ") else { return nil }
        let label = fanout.label[..<range.lowerBound] + ", hub without caps"
        return fanouts.first { $0.label == label && $0.population == fanout.population && $0.seconds > 0 }
    }

    /// The single-node broadcast of `fanout`'s population: what a broadcast on a cluster and an
    /// expression's row are compared with.
    private func broadcast(ofPopulationOf fanout: Fanout) -> Fanout? {
        fanouts.first { $0.label == "broadcast" && $0.population == fanout.population && $0.deliveriesPerSecond > 0 }
    }

    /// An expression's cost per delivery against the broadcast's in the same run: wall time
    /// (the target when the broadcast is itself below the ceiling target: at most
    /// `expressionCostToBroadcast` of it) and CPU of the workers, broker and Redis together.
    private func costAgainstBroadcast(_ fanout: Fanout, broadcast: Fanout) -> [String] {
        guard fanout.deliveriesPerSecond > 0, fanout.expected > 0, broadcast.expected > 0 else { return [] }
        let time = broadcast.deliveriesPerSecond / fanout.deliveriesPerSecond
        var judged = [
            "\(Console.fixed(time, 2)) x the broadcast's time per delivery (<= \(Target.expressionCostToBroadcast): \(time <= Target.expressionCostToBroadcast ? "met" : "NOT met"))"
        ]
        func cpu(_ run: Fanout) -> Double? {
            guard let broker = run.cpu.broker, let redis = run.cpu.redis else { return nil }
            return (run.cpu.workers + broker + redis) / Double(run.expected) * 1e6
        }
        if let here = cpu(fanout), let there = cpu(broadcast) {
            judged.append("CPU \(Console.fixed(here, 2)) us per delivery, \(Console.fixed(here / there, 2)) x the broadcast's")
        }
        return judged
    }

    /// One row per Redis master: its CPU, its commands' time per delivery, and the commands
    /// that took most of it.
    private func redisNodeRows(_ fanout: Fanout) -> [(String, String, String)] {
        guard let nodes = fanout.redisNodes, fanout.expected > 0 else { return [] }
        return nodes.map { node in
            let perDelivery = Double(node.commandMicroseconds) / Double(fanout.expected)
            let top = node.commands.prefix(3).map { command in
                "\(command.name) \(Console.count(command.calls)) x \(Console.fixed(Double(command.microseconds) / Double(max(command.calls, 1)), 1)) us"
            }
            return (
                "  Redis \(node.endpoint): CPU, commands' time per delivery",
                "\(node.cpuSeconds.map { Console.fixed($0, 2) } ?? "?") s, \(Console.fixed(perDelivery, 2)) us",
                top.joined(separator: ", ")
            )
        }
    }

    /// What is wrong with a fan-out's counts: fewer or more deliveries read than expected, or
    /// tasks whose commits add up to another number.
    private func countWarnings(_ fanout: Fanout) -> [String] {
        var warnings: [String] = []
        if fanout.observed != fanout.expected {
            warnings.append("observed \(Console.count(fanout.observed)) of \(Console.count(fanout.expected))")
        }
        if let committed = fanout.committedDeliveries, committed != fanout.expected {
            warnings.append("the tasks' commits report \(Console.count(committed)) of \(Console.count(fanout.expected))")
        }
        return warnings
    }

    /// The rounds: the median ratio judged against the target (and the expression's, when the
    /// rounds ran one), then one row per fan-out with its two ceilings and anything that makes
    /// it suspect.
    private func roundRows(_ rounds: Rounds) -> [(String, String, String)] {
        let ratios = rounds.ratios
        let hasBroadcasts = rounds.fanouts.contains(where: Rounds.isBroadcast)
        func list(_ values: [Double]) -> String { values.map { Console.fixed($0, 2) }.joined(separator: ", ") }
        var rows: [(String, String, String)] = []
        if let median = rounds.medianRatio {
            rows.append(
                (
                    "broadcast rounds, each between two ceilings of its own (\(ratios.count))",
                    "median \(Console.fixed(median, 2)) x (\(list(ratios)))",
                    "median >= \(Target.ratioToCeiling): \(median >= Target.ratioToCeiling ? "met" : "NOT met")"
                ))
        }
        if let median = rounds.expressionMedianRatio, let expression = rounds.fanouts.first(where: { !Rounds.isBroadcast($0) }) {
            var value = "median \(Console.fixed(median, 2)) x (\(list(rounds.expressionRatios)))"
            var met = median >= Target.ratioToCeiling
            var judged = "median >= \(Target.ratioToCeiling): \(met ? "met" : "NOT met")"
            if let cost = rounds.expressionMedianCost {
                value +=
                    "; time per delivery over the broadcast's before it: median \(Console.fixed(cost, 2)) x (\(list(rounds.expressionCosts)))"
                if !met, let broadcasts = rounds.medianRatio, broadcasts < Target.ratioToCeiling {
                    met = cost <= Target.expressionCostToBroadcast
                    judged =
                        "the broadcasts' median below \(Target.ratioToCeiling), so median <= \(Target.expressionCostToBroadcast) x the broadcast's: \(met ? "met" : "NOT met")"
                }
            }
            rows.append(
                (
                    "expression `\(expression.audience)` rounds, each \(hasBroadcasts ? "after its round's broadcast" : "between two ceilings of its own") (\(rounds.expressionRatios.count))",
                    value, judged
                ))
        }
        var round = 0
        for (index, fanout) in rounds.fanouts.enumerated() {
            let isBroadcast = Rounds.isBroadcast(fanout)
            let kind = isBroadcast ? "broadcast" : "expression"
            // A round starts with its broadcast, or is its expression alone.
            if isBroadcast || !hasBroadcasts { round += 1 }
            let before = index < rounds.ceilings.count ? rounds.ceilings[index] : nil
            let after = index + 1 < rounds.ceilings.count ? rounds.ceilings[index + 1] : nil
            func rate(_ ceiling: Ceiling?) -> String { ceiling.map { "\(Console.count(Int($0.referencePerSecond))) rec/s" } ?? "-" }
            var judged: [String] = []
            if let ratio = fanout.ratioToCeiling { judged.append("\(Console.fixed(ratio, 2)) x the better neighbour") }
            let probes = [before?.cpu?.hostProbeMilliseconds, fanout.cpu.hostProbeMilliseconds, after?.cpu?.hostProbeMilliseconds]
            if probes.contains(where: { $0 != nil }) {
                judged.append("host probe " + probes.map { $0.map { Console.fixed($0, 2) } ?? "?" }.joined(separator: " / ") + " ms")
            }
            for (name, cpu) in [("ceiling before", before?.cpu), (kind, Optional(fanout.cpu)), ("ceiling after", after?.cpu)] {
                if let cpu, cpu.isDisturbed, let cores = cpu.othersCores {
                    judged.append("\(name) disturbed: other processes took \(Console.fixed(cores, 2)) cores")
                }
            }
            judged += countWarnings(fanout)
            rows.append(
                (
                    "  round \(round): ceiling before / \(kind) / ceiling after",
                    "\(rate(before)) / \(Console.fixed(fanout.seconds, 2)) s, \(Console.count(Int(fanout.deliveriesPerSecond)))/s / \(rate(after))",
                    judged.joined(separator: "; ")
                ))
        }
        return rows
    }

    /// An expression against the producers alone at its size (`Fanout.sizedCeiling`): whether
    /// the ceiling target is within reach of any fan-out of this size, and how far the row is
    /// from what is.
    private func sizedCeilingRow(_ fanout: Fanout, _ sized: Ceiling) -> (String, String, String) {
        let rate = sized.referencePerSecond
        var value = "\(Console.fixed(Double(sized.records) / rate * 1_000, 1)) ms, \(Console.count(Int(rate))) rec/s"
        var judged: [String] = []
        if let reference = ceilingReference {
            let reach = rate / reference
            value += ", \(Console.fixed(reach, 2)) x ceiling"
            judged.append(
                reach >= Target.ratioToCeiling
                    ? "the ceiling target is within the producers' reach at this size"
                    : "below \(Target.ratioToCeiling) x ceiling even for the producers alone at this size")
        }
        judged.append("the row at \(Console.fixed(fanout.deliveriesPerSecond / rate, 2)) x them")
        if let cpu = sized.cpu, cpu.isDisturbed { judged.append("disturbed") }
        return (
            "  the producers alone at this size (\(Console.count(sized.records)) records, \(sized.transactions) txns, best of \(fanout.sizedCeilingRuns ?? 1))",
            value, judged.joined(separator: "; ")
        )
    }

    /// The CPU account of a measurement, and when known the part of the workers' and the
    /// bench's CPU that librdkafka's own threads used.
    private func cpuRows(_ cpu: CPUAccount) -> [(String, String, String)] {
        let wall = Swift.max(cpu.wallSeconds, 1e-9)
        var rows = [
            (
                "  CPU s: workers / broker / redis / bench / other processes",
                [
                    Console.fixed(cpu.workers, 1), cpu.broker.map { Console.fixed($0, 1) } ?? "?",
                    cpu.redis.map { Console.fixed($0, 1) } ?? "?",
                    Console.fixed(cpu.benchmark, 1), cpu.others.map { Console.fixed($0, 1) } ?? "?",
                ].joined(separator: " / "),
                (cpu.isDisturbed ? "DISTURBED: " : "")
                    + "run \(Console.fixed(cpu.total / wall, 2)) + others \(Console.fixed((cpu.others ?? 0) / wall, 2)) of \(machine.processors) cores; CPU pressure \(cpu.cpuPressure.map { Console.fixed($0, 0) } ?? "?")%"
                    + (cpu.hostProbeMilliseconds.map { "; host probe \(Console.fixed($0, 2)) ms" } ?? "")
                    + (cpu.quietWaitSeconds.map { $0 >= 0.5 ? "; waited \(Console.fixed($0, 1)) s for quiet" : "" } ?? "")
            )
        ]
        if let workers = cpu.workersLibrdkafka, let bench = cpu.benchmarkLibrdkafka {
            rows.append(
                (
                    "    of which librdkafka's threads (rdk:*): workers / bench",
                    "\(Console.fixed(workers, 1)) / \(Console.fixed(bench, 1))",
                    "the callers' threads: \(Console.fixed(cpu.workers - workers, 1)) / \(Console.fixed(cpu.benchmark - bench, 1))"
                ))
        }
        return rows
    }

    /// The reach rows: per count of sender workers, the broadcast's sent curve, its pushes per
    /// second against the local servers' ceiling for its mix, and the senders' cost.
    func reachRows(_ reach: Reach) -> [(String, String, String)] {
        var rows: [(String, String, String)] = []
        func seconds(_ value: Int64?) -> String { value.map { Console.fixed(Double($0) / 1_000, 2) } ?? "-" }
        func megabytes(_ bytes: Int) -> String { Console.fixed(Double(bytes) / 1_048_576, 0) }
        for run in reach.runs {
            let sent = run.sentByPlatform.values.reduce(0, +)
            let platforms = run.sentByPlatform.sorted { $0.key < $1.key }.map { "\($0.key) \(Console.count($0.value))" }
            rows.append(
                (
                    "reach: \(Console.count(run.expected)) devices, \(run.senders) sender worker(s), publish to pushed (s)",
                    "50 % \(seconds(run.sent?.p50Ms)), 90 % \(seconds(run.sent?.p90Ms)), 99 % \(seconds(run.sent?.p99Ms)), all \(seconds(run.sent?.allMs))",
                    "sent \(Console.count(sent)) of \(Console.count(run.expected)) (\(platforms.joined(separator: ", "))), \(run.notSent) not: \(Self.verdict(sent == run.expected))"
                ))
            let ceiling = reach.mixedCeiling(run)
            let ratio = ceiling.map { run.pushesPerSecond / $0 }
            rows.append(
                (
                    "  pushes/s, publish to last push; committed all",
                    "\(Console.count(Int(run.pushesPerSecond)))/s\(ratio.map { ", \(Console.fixed($0, 2)) x the ceiling" } ?? ""); \(seconds(run.committed?.allMs)) s",
                    run.senders == 1
                        ? ratio.map {
                            ">= \(Console.fixed(Target.reachRatioToCeiling, 1)) x ceiling: \(Self.verdict($0 >= Target.reachRatioToCeiling))"
                        }
                            ?? "no ceiling (h2load missing)"
                        : "the servers' ceiling is shared"
                ))
            let rssGrowth = run.senderTenthRSSBytes > 0 ? Double(run.senderPeakRSSBytes) / Double(run.senderTenthRSSBytes) : nil
            rows.append(
                (
                    "  CPU per push: senders, fan-out; sender RSS",
                    "\(Console.fixed(run.senderCPUSeconds / Double(max(sent, 1)) * 1e6, 1)) us, \(Console.fixed(run.fanoutCPUSeconds / Double(max(run.expected, 1)) * 1e6, 1)) us; \(megabytes(run.senderBaselineRSSBytes)) -> \(megabytes(run.senderTenthRSSBytes)) (a tenth) -> \(megabytes(run.senderPeakRSSBytes)) MB",
                    rssGrowth.map {
                        "peak <= \(Console.fixed(Target.senderRSSGrowth, 1)) x at a tenth: \(Self.verdict($0 <= Target.senderRSSGrowth)) (\(Console.fixed($0, 2)) x)"
                    } ?? ""
                ))
        }
        if let apns = reach.apnsCeilingPerSecond, let fcm = reach.fcmCeilingPerSecond {
            rows.append(
                (
                    "  the servers' ceilings (h2load)", "APNs \(Console.count(Int(apns)))/s, FCM \(Console.count(Int(fcm)))/s",
                    "\(reach.ceilingCommand ?? "") each"
                ))
        }
        return rows
    }

    /// A sender row (APNs or Web Push): pushes per second against the server's ceiling, then the
    /// ceiling, the process's memory, CPU and receipts, and for Web Push the cost of encrypting
    /// one message against pywebpush's on the same machine.
    func senderRows(_ sender: Sender) -> [(String, String, String)] {
        let webPush = sender.platform == Platform.webpush.rawValue
        let ratio = sender.ceilingPerSecond.map { sender.sendsPerSecond / $0 }
        let all = sender.receipts == sender.deliveries && sender.sent == sender.deliveries
        var rows: [(String, String, String)] = []
        rows.append(
            (
                "sender: \(Console.count(sender.deliveries)) deliveries to \(webPush ? "local Web Push, encrypted" : "local APNs") (\(sender.connections) x \(sender.streams) streams)",
                "\(Console.count(Int(sender.sendsPerSecond)))/s in \(Console.fixed(sender.sendSeconds, 2)) s"
                    + (ratio.map { ", \(Console.fixed($0, 2)) x ceiling" } ?? ""),
                ratio.map {
                    ">= \(Console.fixed(Target.senderRatioToCeiling, 1)) x ceiling: \(Self.verdict(all && $0 >= Target.senderRatioToCeiling))"
                }
                    ?? "no ceiling (h2load missing)"
            ))
        if let ceiling = sender.ceilingPerSecond {
            rows.append(("  the server's ceiling (h2load)", "\(Console.count(Int(ceiling)))/s", sender.ceilingCommand ?? ""))
        }
        rows.append(
            (
                "  sender RSS, CPU (per delivery); receipts",
                "\(Console.fixed(Double(sender.peakRSSBytes) / 1_048_576, 0)) MB (before: \(Console.fixed(Double(sender.baselineRSSBytes) / 1_048_576, 0)) MB), \(Console.fixed(sender.cpuSeconds, 1)) s (\(Console.fixed(sender.cpuSeconds / Double(max(1, sender.deliveries)) * 1e6, 0)) us)",
                "\(Console.count(sender.receipts)) receipts, \(Console.count(sender.sent)) sent, \(sender.extraRequests) extra requests"
            ))
        if let encryption = sender.encryption {
            let speedup = encryption.pywebpushMicroseconds.map { $0 / encryption.heraldMicroseconds }
            rows.append(
                (
                    "  encrypting one message, one core: Herald / pywebpush",
                    "\(Console.fixed(encryption.heraldMicroseconds, 1)) us / \(encryption.pywebpushMicroseconds.map { Console.fixed($0, 1) + " us" } ?? "?")"
                        + (speedup.map { ", \(Console.fixed($0, 1)) x" } ?? ""),
                    speedup.map {
                        ">= \(Console.fixed(Target.webPushEncryptionSpeedup, 0)) x pywebpush: \(Self.verdict($0 >= Target.webPushEncryptionSpeedup))"
                    }
                        ?? encryption.pywebpushCommand
                ))
        }
        return rows
    }

    /// The idle row: the worker and the API together against the target, then the broker and
    /// Redis with the fetch waits the two ran with, and the measurement's CPU account.
    func idleRows(_ idle: Idle) -> [(String, String, String)] {
        func percent(_ value: Double?) -> String { value.map { Console.fixed($0, 2) } ?? "?" }
        var judged =
            "< \(Console.fixed(Target.idleHeraldPercentOfCore, 0)) % of a core: \(Self.verdict(idle.heraldPercentOfCore < Target.idleHeraldPercentOfCore))"
        if idle.cpu.isDisturbed, let cores = idle.cpu.othersCores {
            judged += "; disturbed: other processes took \(Console.fixed(cores, 2)) cores"
        }
        var rows: [(String, String, String)] = [
            (
                "idle Herald: worker (\(idle.workerRoles)) + API, \(Console.fixed(idle.cpu.wallSeconds, 0)) s after a \(Console.fixed(idle.warmupSeconds, 0)) s warm-up",
                "\(percent(idle.heraldPercentOfCore)) % of a core (worker \(percent(idle.workerPercentOfCore)) + API \(percent(idle.apiPercentOfCore)))",
                judged
            ),
            (
                "  idle: broker / Redis over the same seconds",
                "\(percent(idle.brokerPercentOfCore)) / \(percent(idle.redisPercentOfCore)) % of a core",
                "the production fetch waits (Herald's defaults): planner \(idle.plannerFetchWaitMs) ms, task lanes \(idle.taskFetchWaitMs) ms"
            ),
        ]
        rows.append(contentsOf: cpuRows(idle.cpu))
        return rows
    }

    /// How a row meets its target.
    static func verdict(_ met: Bool) -> String { met ? "met" : "NOT met" }

    /// The one table a run prints: measurement, value, and the ratio or target it is judged by.
    public var table: String {
        var rows: [(String, String, String)] = []
        let verdict = Self.verdict
        if let reference = ceilingReference {
            for (title, measured) in [("broker ceiling", ceiling), ("broker ceiling again, after the fan-outs", ceilingAfter)] {
                guard let measured else { continue }
                rows.append(contentsOf: ceilingRows(title, measured, reference: reference))
            }
        }
        for seed in seeding {
            if let check = seed.identityCheck {
                rows.append(
                    (
                        "bulk loader = Lua apply (\(Console.count(check.registrations)) regs)", "\(check.keys) keys",
                        check.identical ? "identical" : "DIFFERENT"
                    ))
            } else {
                rows.append(
                    (
                        "seed R=\(Console.count(seed.population)) (\(seed.summary.path))",
                        "\(Console.fixed(seed.summary.seconds, 1)) s (\(Console.count(Int(seed.summary.perSecond)))/s)",
                        seed.redisBytesPerRegistration.map { "Redis memory \(Console.fixed($0, 0)) B per registration" } ?? ""
                    ))
                if let cpu = seed.cpu { rows.append(contentsOf: cpuRows(cpu)) }
            }
        }
        for fanout in fanouts {
            var judged: [String] = []
            if let ratio = fanout.ratioToCeiling {
                judged.append(
                    "\(Console.fixed(ratio, 2)) x ceiling (>= \(Target.ratioToCeiling): \(verdict(ratio >= Target.ratioToCeiling)))")
            }
            // The time target is a million devices'; larger runs are judged by the ratio and
            // by their growth per delivery (`growthRows`).
            if fanout.label == "broadcast" && fanout.population == 1_000_000 {
                judged.append(
                    "<= \(Console.fixed(Target.millionBroadcastSeconds, 0)) s: \(verdict(fanout.seconds <= Target.millionBroadcastSeconds))"
                )
            }
            if fanout.cpu.isDisturbed, let cores = fanout.cpu.othersCores {
                judged.append("disturbed: other processes took \(Console.fixed(cores, 2)) cores")
            }
            if fanout.audience != "broadcast", let broadcast = broadcast(ofPopulationOf: fanout) {
                judged.append(contentsOf: costAgainstBroadcast(fanout, broadcast: broadcast))
            }
            if let few = templateBaseline(of: fanout), few.seconds > 0 {
                let cost = fanout.seconds / few.seconds
                judged.append(
                    "\(Console.fixed(cost, 2)) x the time over \(few.label.dropFirst("broadcast over ".count)) (<= \(Target.templateDiversityCost): \(verdict(cost <= Target.templateDiversityCost)))"
                )
            }
            if let uncapped = uncappedBaseline(of: fanout) {
                let cost = fanout.seconds / uncapped.seconds
                judged.append(
                    "\(Console.fixed(cost, 2)) x the time without caps (<= \(Target.capOverhead): \(verdict(cost <= Target.capOverhead)))")
            }
            if fanout.label.hasPrefix("broadcast on a Redis Cluster"), let single = broadcast(ofPopulationOf: fanout) {
                judged.append("\(Console.fixed(fanout.deliveriesPerSecond / single.deliveriesPerSecond, 2)) x one node's deliveries/s")
            }
            judged += countWarnings(fanout)
            let byCommits = fanout.clock == BenchmarkOptions.Clock.committed.rawValue
            rows.append(
                (
                    "\(fanout.label) R=\(Console.count(fanout.population)) -> \(Console.count(fanout.expected)) devices, \(byCommits ? "committed" : "seen")",
                    "\(Console.fixed(fanout.seconds, 2)) s, \(Console.count(Int(fanout.deliveriesPerSecond)))/s (first \(Console.fixed(fanout.firstDeliverySeconds * 1_000, 0)) ms)",
                    judged.joined(separator: "; ")
                ))
            if let adjusted = ratioAtCeilingHostSpeed(fanout), let here = fanout.cpu.hostProbeMilliseconds,
                let there = ceilingReferenceHostProbe
            {
                rows.append(
                    (
                        "  the ratio at the reference ceiling's host speed (estimate)",
                        "\(Console.fixed(adjusted, 2)) x ceiling",
                        "host probe \(Console.fixed(here, 2)) ms here, \(Console.fixed(there, 2)) ms in the reference ceiling"
                    ))
            }
            if let sized = fanout.sizedCeiling { rows.append(sizedCeilingRow(fanout, sized)) }
            if let counted = fanout.countedSeconds {
                var judged = fanout.observed == fanout.expected ? "exactly the expected count" : "NOT the expected count"
                if let sizes = recordSizes(fanout) { judged += "; \(sizes)" }
                rows.append(
                    (
                        "  deliveries read and counted after the clock stopped",
                        "\(Console.count(fanout.observed)) by \(Console.fixed(counted, 2)) s after publish",
                        judged
                    ))
            }
            if let completed = fanout.workerCompletedSeconds {
                rows.append(
                    (
                        "  worker clock: accepted / planner commit seen / first task started / first rendered / last task done",
                        [
                            fanout.acceptedSeconds, fanout.plannerCommitSeconds, fanout.taskStartedSeconds, fanout.renderedFirstSeconds,
                            completed,
                        ]
                        .map { $0.map { Console.fixed($0, 3) } ?? "?" }.joined(separator: " / ") + " s",
                        "status \(fanout.statusTargets.map(Console.count) ?? "?") targets in \(fanout.statusTasks.map(String.init) ?? "?") tasks"
                            + (fanout.plans.map {
                                "; slots by plan: " + $0.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
                            } ?? "")
                    ))
                if let seen = fanout.seenAtWorkerCompletion, fanout.expected > 0 {
                    rows.append(
                        (
                            "  seen by the reader when the last task finished",
                            "\(Console.count(seen)) (\(Console.fixed(100 * Double(seen) / Double(fanout.expected), 0)) %)",
                            "the rest: last commit, broker visibility, reader catching up"
                        ))
                }
            }
            rows.append(contentsOf: cpuRows(fanout.cpu))
            rows.append(contentsOf: redisNodeRows(fanout))
        }
        let capPairs = capOverheads
        let undisturbed = capPairs.filter { !$0.disturbed }.map(\.ratio)
        if !capPairs.isEmpty {
            let listed = capPairs.map { Console.fixed($0.ratio, 2) + ($0.disturbed ? " disturbed" : "") }.joined(separator: ", ")
            let median = Rounds.median(undisturbed)
            rows.append(
                (
                    "frequency caps: capped over uncapped broadcast, median of \(undisturbed.count) undisturbed pairs",
                    "\(median.map { Console.fixed($0, 2) + " x" } ?? "-") (pairs \(listed))",
                    "<= \(Target.capOverhead) x: \(median.map { Self.verdict($0 <= Target.capOverhead) } ?? "not measured: every pair disturbed")"
                ))
        }
        if let rounds, !rounds.fanouts.isEmpty {
            rows.append(contentsOf: roundRows(rounds))
        }
        for entry in latency {
            let target = entry.label == "idle" ? Target.idleP99Milliseconds : Target.loadedP99Milliseconds
            rows.append(
                (
                    "one-user latency \(entry.label) (\(entry.seen)/\(entry.events) events)",
                    "p50 \(Console.fixed(entry.p50Milliseconds, 1)) / p99 \(Console.fixed(entry.p99Milliseconds, 1)) / max \(Console.fixed(entry.maxMilliseconds, 1)) ms",
                    "p99 <= \(Console.fixed(target, 0)) ms: \(verdict(entry.events > 0 && entry.p99Milliseconds <= target && entry.seen == entry.events))"
                ))
            if let p50 = entry.acceptedP50Milliseconds, let p99 = entry.acceptedP99Milliseconds {
                rows.append(
                    ("  of which publish to accepted by the planner", "p50 \(Console.fixed(p50, 1)) / p99 \(Console.fixed(p99, 1)) ms", ""))
            }
            if let p50 = entry.renderedP50Milliseconds, let p99 = entry.renderedP99Milliseconds {
                rows.append(
                    (
                        "  of which publish to rendered by the express lane",
                        "p50 \(Console.fixed(p50, 1)) / p99 \(Console.fixed(p99, 1)) ms",
                        "the rest: commit, broker visibility, fetch"
                    ))
            }
        }
        let smallest = memory.min { $0.population < $1.population }
        for entry in memory.sorted(by: { $0.population < $1.population }) {
            let peak = entry.peakRSSBytes.max() ?? 0
            var judged = "<= 300 MB: \(verdict(peak <= Target.peakRSSBytes))"
            if let smallest, smallest.population != entry.population, let base = smallest.peakRSSBytes.max(), base > 0 {
                judged += "; \(Console.fixed(Double(peak) / Double(base), 2)) x R=\(Console.count(smallest.population))"
            }
            rows.append(
                (
                    "worker peak RSS, R=\(Console.count(entry.population))",
                    "\(Console.fixed(Double(peak) / 1_048_576, 0)) MB (before: \(Console.fixed(Double(entry.baselineRSSBytes.max() ?? 0) / 1_048_576, 0)) MB)",
                    judged
                ))
        }
        rows.append(contentsOf: growthRows())
        if let reindex {
            rows.append(
                (
                    "reindex R=\(Console.count(reindex.registrations))",
                    "\(Console.fixed(reindex.seconds, 1)) s (\(Console.count(Int(reindex.perSecond)))/s)",
                    reindex.identicalToSeeded.map { $0 ? "identical to seeded" : "DIFFERS from seeded" } ?? ""
                ))
        }
        if let schedules {
            let all = schedules.released == schedules.schedules && schedules.early == 0
            rows.append(
                (
                    "\(Console.count(schedules.schedules)) schedules due in one second (\(Console.count(schedules.released)) released)",
                    "late by p50 \(Console.fixed(schedules.seenP50Milliseconds, 0)) / p99 \(Console.fixed(schedules.seenP99Milliseconds, 0)) / max \(Console.fixed(schedules.seenMaxMilliseconds, 0)) ms",
                    "p99 <= \(Console.fixed(Target.releaseP99Milliseconds, 0)) ms: \(verdict(all && schedules.seenP99Milliseconds <= Target.releaseP99Milliseconds))"
                ))
            rows.append(
                (
                    "  of which until the scheduler enqueued it",
                    "p50 \(Console.fixed(schedules.stampedP50Milliseconds, 0)) / p99 \(Console.fixed(schedules.stampedP99Milliseconds, 0)) ms",
                    "the rest: commit, broker visibility, fetch"
                ))
            rows.append(
                (
                    "  scheduler peak RSS, CPU for the release",
                    "\(Console.fixed(Double(schedules.schedulerPeakRSSBytes) / 1_048_576, 0)) MB (before: \(Console.fixed(Double(schedules.schedulerBaselineRSSBytes) / 1_048_576, 0)) MB), \(Console.fixed(schedules.schedulerCPUSeconds, 2)) s",
                    "indexed \(Console.fixed(schedules.indexedSeconds, 1)) s after the first publish; \(schedules.duplicates) seen twice"
                ))
        }
        if let stop {
            rows.append(
                (
                    "broadcast to \(Console.count(stop.audience)) stopped in flight (\(stop.tasksBeforeStop) of \(stop.tasks) tasks had reported)",
                    "last task reported \(Console.fixed(stop.secondsToLastReport * 1_000, 0)) ms after the stop",
                    "<= \(Console.fixed(Target.stopSeconds * 1_000, 0)) ms: \(Self.verdict(stop.secondsToLastReport <= Target.stopSeconds))"
                ))
            rows.append(
                (
                    "  deliveries committed: at the stop / in the end",
                    "\(Console.count(stop.deliveredBeforeStop)) / \(Console.count(stop.delivered)) of \(Console.count(stop.audience))",
                    "\(stop.stoppedTasks) tasks cut short or skipped"
                ))
        }
        if let rehearsal {
            rows.append(
                (
                    "rehearsal (dryRun) of a broadcast to \(Console.count(rehearsal.audience)), \(rehearsal.tasks) tasks",
                    "\(Console.fixed(rehearsal.seconds, 2)) s; counted \(Console.count(rehearsal.counted)), \(rehearsal.previews) previews",
                    "< \(Console.fixed(Target.rehearsalSeconds, 0)) s: \(Self.verdict(rehearsal.seconds < Target.rehearsalSeconds)); count exact: \(Self.verdict(rehearsal.counted == rehearsal.audience))"
                ))
        }
        if let preemption {
            let ratio = preemption.duringSeconds / max(preemption.aloneSeconds, 1e-9)
            let exact = preemption.bulkDelivered == preemption.bulkAudience && preemption.breakingDelivered == preemption.breakingAudience
            rows.append(
                (
                    "breaking event to \(Console.count(preemption.breakingAudience)) during a bulk broadcast to \(Console.count(preemption.bulkAudience))",
                    "\(Console.fixed(preemption.duringSeconds, 2)) s, alone \(Console.fixed(preemption.aloneSeconds, 2)) s: \(Console.fixed(ratio, 2)) x",
                    "<= \(Console.fixed(Target.preemptionCost, 1)) x alone: \(Self.verdict(ratio <= Target.preemptionCost))"
                ))
            rows.append(
                (
                    "  bulk broadcast: committed in / deliveries counted",
                    "\(Console.fixed(preemption.bulkSeconds, 2)) s; \(Console.count(preemption.bulkDelivered)) of \(Console.count(preemption.bulkAudience)), breaking \(Console.count(preemption.breakingDelivered)) of \(Console.count(preemption.breakingAudience))",
                    "exact: \(Self.verdict(exact))"
                ))
        }
        for entry in isolation {
            let ratio = entry.ratio
            let loaded = entry.wasLoaded
            rows.append(
                (
                    "another hub's breaking alert to \(Console.count(entry.alertAudience)) during \(entry.load)"
                        + (entry.pair.map { " (pair \($0))" } ?? ""),
                    "\(Console.fixed(entry.duringSeconds, 2)) s, alone \(Console.fixed(entry.aloneSeconds, 2)) s: \(Console.fixed(ratio, 2)) x",
                    "<= \(Console.fixed(Target.hubIsolationCost, 1)) x alone: \(Self.verdict(ratio <= Target.hubIsolationCost && loaded))"
                        + (loaded ? "" : " (the load ended first)")
                ))
            let counted =
                "alert \(Console.count(entry.alertDelivered)) of \(Console.count(entry.alertAudience))"
                + (entry.loadAudience.map { audience in
                    ", broadcast \(Console.count(entry.loadDelivered ?? 0)) of \(Console.count(audience))"
                } ?? "")
                + (entry.loadPerSecondDuring.map { during in
                    "; writes/s before the alert \(Console.count(Int(entry.loadPerSecondBefore ?? 0))), during it \(Console.count(Int(during)))"
                } ?? "")
            let exact = entry.alertDelivered == entry.alertAudience && entry.loadDelivered == entry.loadAudience
            rows.append(
                (
                    "  the load ran on for / deliveries counted",
                    "\(Console.fixed(entry.loadSecondsAfterAlert, 2)) s after the alert's publish; \(counted)",
                    "exact: \(Self.verdict(exact))"
                ))
        }
        rows.append(contentsOf: isolationSummaryRows())
        for sender in [sender, webPushSender].compactMap({ $0 }) { rows.append(contentsOf: senderRows(sender)) }
        if let reach { rows.append(contentsOf: reachRows(reach)) }
        if let idle { rows.append(contentsOf: idleRows(idle)) }
        for entry in micro {
            rows.append(
                ("micro: \(entry.name)", "\(Console.fixed(entry.nanosecondsPerOperation, 1)) ns/op", "median of \(entry.runs.count)"))
        }

        let widths = (
            max(12, rows.map(\.0.count).max() ?? 0), max(5, rows.map(\.1.count).max() ?? 0), max(6, rows.map(\.2.count).max() ?? 0)
        )
        func pad(_ text: String, _ width: Int) -> String { text + String(repeating: " ", count: max(0, width - text.count)) }
        var lines: [String] = []
        lines.append(
            "herald bench \(runId): \(machine.processors) CPUs \(machine.cpuModel), \(machine.memoryBytes / 1_073_741_824) GiB, Linux \(machine.kernel), load \(machine.loadAverageAtStart) at start"
        )
        lines.append(
            "librdkafka \(machine.librdkafka); broker \(machine.broker); Redis \(machine.redis); \(settings.workers) worker(s) x \(settings.bulkLanesPerWorker) bulk lanes, \(settings.partitions) partitions, \(settings.slots) slots"
        )
        lines.append("| \(pad("measurement", widths.0)) | \(pad("value", widths.1)) | \(pad("judged by", widths.2)) |")
        lines.append(
            "|\(String(repeating: "-", count: widths.0 + 2))|\(String(repeating: "-", count: widths.1 + 2))|\(String(repeating: "-", count: widths.2 + 2))|"
        )
        for row in rows {
            lines.append("| \(pad(row.0, widths.0)) | \(pad(row.1, widths.1)) | \(pad(row.2, widths.2)) |")
        }
        return lines.joined(separator: "\n")
    }

    /// Linear growth: a broadcast's and the default expression's time per delivery at the
    /// largest population measured, over the same fan-out at the next smaller one (the memory
    /// phases run both at their sizes).
    func growthRows() -> [(String, String, String)] {
        var rows: [(String, String, String)] = []
        for label in ["broadcast", "expression"] {
            let runs = fanouts.filter { $0.label == label && $0.expected > 0 }
            guard let large = runs.max(by: { $0.population < $1.population }),
                let small = runs.filter({ $0.population < large.population }).max(by: { $0.population < $1.population })
            else { continue }
            let perLarge = large.seconds / Double(large.expected)
            let perSmall = small.seconds / Double(small.expected)
            let growth = perLarge / perSmall
            rows.append(
                (
                    "\(label): time per delivery, R=\(Console.count(large.population)) over R=\(Console.count(small.population))",
                    "\(Console.fixed(perLarge * 1e6, 2)) / \(Console.fixed(perSmall * 1e6, 2)) us = \(Console.fixed(growth, 2)) x",
                    "<= \(Console.fixed(Target.perDeliveryGrowth, 1)) x: \(Self.verdict(growth <= Target.perDeliveryGrowth))"
                ))
        }
        return rows
    }
}
