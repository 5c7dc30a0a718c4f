import Foundation
import HeraldPipeline
import HeraldRedis
import HeraldRegistry
import Logging

/// Runs the phases `BenchmarkOptions` selects, in an order that keeps them from disturbing
/// each other (micro-benchmarks on a quiet machine, the broker ceiling before any worker
/// exists, small populations before the large one fills Redis, the idle row's minutes last),
/// and writes the report.
public struct BenchmarkRunner: Sendable {
    public let options: BenchmarkOptions
    public let environment: BenchmarkEnvironment
    /// Unique per run: part of every topic, consumer, transactional id and Redis prefix.
    public let runId: String
    /// Samples the host's speed while the population phases run.
    let probe = HostSpeedProbe()

    public init(options: BenchmarkOptions, environment: BenchmarkEnvironment, runId: String = BenchmarkRunner.newRunId()) {
        self.options = options
        self.environment = environment
        self.runId = runId
    }

    public static func newRunId() -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        return "bench-\(formatter.string(from: Date()))-\(UUID().uuidString.prefix(4).lowercased())"
    }

    public func names(_ phase: String) -> BenchmarkNames {
        BenchmarkNames(topicPrefix: "\(runId).\(phase).", redisPrefix: "\(runId)-\(phase)")
    }

    /// Runs everything and returns the report and where its JSON was written.
    public func run() async throws -> (BenchmarkReport, URL) {
        let base = try environment.configuration(names("main"))
        let redisInfo = await Self.redisServerInfo(base.redis)
        var report = BenchmarkReport(
            runId: runId, startedAt: ISO8601DateFormatter().string(from: Date()),
            machine: MachineDescription.current(bootstrapServers: base.bootstrapServers, redisVersion: redisInfo.version),
            settings: BenchmarkReport.Settings(
                registrations: options.registrations, memorySizes: options.memorySizes, workers: options.workers,
                bulkLanesPerWorker: base.bulkLanes, expressLanesPerWorker: base.expressLanes,
                partitions: Int(base.topics.deliveriesPartitions), slots: base.layout.slotCount,
                tasksPerBroadcast: base.planner.bulkTaskCount, lingerMs: base.deliveryLingerMs,
                compression: base.deliveryCompression.rawValue, seedPath: options.seedPath.rawValue,
                clock: options.clock.rawValue
            )
        )
        let machine = report.machine
        Console.say(
            "herald bench \(runId): \(machine.processors) CPUs (\(machine.cpuModel)), load \(machine.loadAverageAtStart), librdkafka \(machine.librdkafka), \(machine.broker), Redis \(machine.redis)"
        )

        if options.runMicro {
            Console.say("== micro-benchmarks")
            report.micro = try MicroBenchmarks(runs: options.microRuns).run()
            for result in report.micro { Console.say("  \(result.name): \(Console.fixed(result.nanosecondsPerOperation)) ns/op") }
        }

        if options.runBroadcast || options.runMemory || options.runLatency || options.runCeiling || !options.templateVariants.isEmpty
            || options.capPopulation > 0 || options.reachPopulation > 0
        {
            probe.start()
            defer { probe.stop() }
            try await populationPhases(base: base, redisPID: redisInfo.pid, report: &report)
        }

        if options.schedules > 0 {
            let names = names("schedule")
            report.schedules = try await SchedulePhase(
                count: options.schedules, leadSeconds: options.scheduleLeadSeconds, names: names,
                configuration: try environment.configuration(names), options: options, environment: environment
            ).run()
        }

        if options.senderDeliveries > 0 {
            let names = names("sender")
            report.sender = try await SenderPhase(
                platform: .apns, count: options.senderDeliveries, names: names, configuration: try environment.configuration(names),
                options: options, environment: environment
            ).run()
        }
        if options.webPushDeliveries > 0 {
            let names = names("webpush")
            report.webPushSender = try await SenderPhase(
                platform: .webpush, count: options.webPushDeliveries, names: names, configuration: try environment.configuration(names),
                options: options, environment: environment
            ).run()
        }

        if options.runIdle {
            await idlePhase(base: base, redisPID: redisInfo.pid, report: &report)
        }

        report.finishedAt = ISO8601DateFormatter().string(from: Date())
        report.notes.append(contentsOf: Self.standingNotes(options.clock))
        let disturbed = report.disturbedMeasurements
        if !disturbed.isEmpty {
            let note =
                "Disturbed (other processes took \(Console.fixed(BenchmarkReport.CPUAccount.disturbedCores, 1)) cores or more, so these ran on fewer free cores than the run's own; rerun on a quiet machine before comparing them): "
                + disturbed.joined(separator: "; ") + "."
            report.notes.append(note)
            Console.say(note)
        }
        let url = try write(report)
        return (report, url)
    }

    private func populationPhases(base: PipelineConfiguration, redisPID: Int32?, report: inout BenchmarkReport) async throws {
        let brokerPID = MachineDescription.brokerPID(base.bootstrapServers)
        let mainSize = options.registrations
        let mainPopulation = SeedPopulation(count: mainSize, seed: options.populationSeed)
        let redisPIDs = redisPID.map { [$0] } ?? []

        if options.runCeiling {
            Console.say("== broker ceiling")
            report.ceiling = try await measureCeiling(
                base: base, topic: "\(runId).ceiling.deliveries", population: mainPopulation, redisPID: redisPID)
        }

        if options.seedPath == .bulk {
            Console.say("== bulk loader identity check")
            let outcome = try await SeedIdentityCheck(
                redis: base.redis, slotCount: base.layout.slotCount, prefix: "\(runId)-identity", logger: environment.logger
            ).run(seed: options.populationSeed)
            Console.say("  \(outcome.keys) keys, identical: \(outcome.identical)")
            guard outcome.identical else {
                throw BenchmarkError(
                    "the bulk loader's keys differ from the Lua apply path's: \(outcome.differences)", code: "bulk_not_identical")
            }
            report.seeding.append(
                BenchmarkReport.Seeding(
                    population: outcome.registrations,
                    summary: PopulationSeeder.Summary(
                        registrations: outcome.registrations, path: "identity check", seconds: 0, perSecond: 0
                    ), identityCheck: outcome, cpu: nil))
        }

        if options.runMemory {
            for size in options.memorySizes.sorted() where size != mainSize {
                let names = names("r\(size)")
                let phase = PopulationPhase(
                    population: SeedPopulation(count: size, seed: options.populationSeed), kind: .memory, names: names,
                    configuration: try environment.configuration(names), options: options, environment: environment,
                    redisPIDs: redisPIDs, brokerPID: brokerPID, probe: probe
                )
                try await phase.run(into: &report)
            }
        }
        if !options.templateVariants.isEmpty {
            Console.say("== template diversity")
            for variants in options.templateVariants {
                let population = SeedPopulation(
                    count: options.templatePopulation, seed: options.populationSeed, templateVariants: variants)
                let names = names("t\(variants)")
                let phase = PopulationPhase(
                    population: population, kind: .templates(distinct: population.distinctTemplates()), names: names,
                    configuration: try environment.configuration(names), options: options, environment: environment,
                    redisPIDs: redisPIDs, brokerPID: brokerPID, probe: probe
                )
                try await phase.run(into: &report)
            }
        }
        if options.capPopulation > 0 {
            Console.say("== frequency caps")
            let names = names("caps")
            let phase = PopulationPhase(
                population: SeedPopulation(count: options.capPopulation, seed: options.populationSeed),
                kind: .caps(rules: options.capRules, pairs: options.capPairs), names: names,
                configuration: try environment.configuration(names), options: options, environment: environment,
                redisPIDs: redisPIDs, brokerPID: brokerPID, probe: probe
            )
            try await phase.run(into: &report)
        }
        if options.runBroadcast || options.runLatency {
            let names = names("main")
            var phase = PopulationPhase(
                population: mainPopulation, kind: .main, names: names, configuration: try environment.configuration(names),
                options: options, environment: environment, redisPIDs: redisPIDs, brokerPID: brokerPID, probe: probe
            )
            if options.runCeiling && options.runBroadcast && options.rounds > 0 {
                phase.roundCeiling = { round, eventId, workers, aroundTimed in
                    try await measureCeiling(
                        base: base, topic: "\(runId).round-\(round).ceiling.deliveries", population: mainPopulation,
                        redisPID: redisPID, eventId: eventId, workers: workers, idempotent: false, aroundTimed: aroundTimed
                    )
                }
            }
            try await phase.run(into: &report)
            if options.runBroadcast {
                try await clusterPhase(base: base, population: mainPopulation, brokerPID: brokerPID, report: &report)
            }
            if options.runCeiling && options.runBroadcast {
                // The host's speed drifts over a run on a shared machine: a second measurement
                // next to the fan-outs, and the better of the two as the reference.
                Console.say("== broker ceiling, again after the fan-out phases")
                // The cleanup just deleted the population's keys: Redis rewrites its log and
                // the kernel frees the old one, which would share the cores with the ceiling.
                if try await RedisBackgroundWork.waitUntilIdle(base.redis) == nil {
                    Console.say("  Redis was still rewriting its log after 180 s; measuring anyway")
                }
                report.ceilingAfter = try await measureCeiling(
                    base: base, topic: "\(runId).ceiling-after.deliveries", population: mainPopulation, redisPID: redisPID
                )
                try await measureSizedCeilings(base: base, population: mainPopulation, redisPID: redisPID, report: &report)
            }
        }
        if options.reachPopulation > 0 {
            Console.say("== reach: publish to pushed, through the local APNs and FCM servers")
            let names = names("reach")
            let phase = PopulationPhase(
                population: SeedPopulation(count: options.reachPopulation, seed: options.populationSeed),
                kind: .reach(senders: options.reachSenders), names: names, configuration: try environment.configuration(names),
                options: options, environment: environment, redisPIDs: redisPIDs, brokerPID: brokerPID, probe: probe
            )
            try await phase.run(into: &report)
        }
        report.applyCeilingReference()
    }

    /// What an idle Herald costs (`IdlePhase`), last, so the other rows come first. A failure
    /// here becomes a note instead of ending the run: every other row is measured by then.
    private func idlePhase(base: PipelineConfiguration, redisPID: Int32?, report: inout BenchmarkReport) async {
        guard let defaults = environment.productionDefaults else {
            Console.say("== no idle row: this harness gives no production defaults to run Herald with")
            return
        }
        let names = names("idle")
        do {
            report.idle = try await IdlePhase(
                names: names, configuration: try environment.configuration(names), options: options, environment: environment,
                defaults: defaults, brokerPID: MachineDescription.brokerPID(base.bootstrapServers), redisPIDs: redisPID.map { [$0] } ?? []
            ).run()
            report.notes.append(
                "The idle row ran one `herald worker --roles \(defaults.roles)` and one `herald api` with nothing to do, on Herald's production fetch waits (planner \(defaults.plannerFetchWaitMs) ms, task lanes \(defaults.taskFetchWaitMs) ms) whatever the run's own; its CPU is utime + stime from /proc/<pid>/stat over the measured seconds, in percent of one core."
            )
        } catch {
            let note = "The idle row was not measured: \(error)"
            report.notes.append(note)
            Console.say(note)
        }
    }

    /// The main population's broadcast once more, on a Redis Cluster started for it and removed
    /// afterwards: same broker, same run, so its time stands next to the single node's.
    private func clusterPhase(
        base: PipelineConfiguration, population: SeedPopulation, brokerPID: Int32?, report: inout BenchmarkReport
    ) async throws {
        let masters = options.redisClusterMasters
        guard masters > 0 else { return }
        guard base.redis.cluster == nil else {
            Console.say("== no separate Redis Cluster row: the run's own Redis is a cluster")
            return
        }
        guard let start = environment.startRedisCluster else {
            Console.say("== no Redis Cluster row: this harness cannot start a cluster")
            return
        }
        Console.say("== the broadcast on a Redis Cluster of \(masters) masters and \(masters) replicas")
        let cluster = try start(masters)
        defer { cluster.stop() }
        var names = names("cluster")
        names.redisURL = cluster.url
        let phase = PopulationPhase(
            population: population, kind: .cluster(masters: masters), names: names,
            configuration: try environment.configuration(names), options: options, environment: environment,
            redisPIDs: cluster.pids, brokerPID: brokerPID, probe: probe
        )
        try await phase.run(into: &report)
    }

    /// Each expression row of the main population narrower than the ceiling, against the
    /// producers alone writing its count of records in its count of transactions
    /// (`Fanout.sizedCeiling`): below some size the transactions' fixed costs keep even them
    /// under the ceiling's rate, and with them any fan-out.
    private func measureSizedCeilings(
        base: PipelineConfiguration, population: SeedPopulation, redisPID: Int32?, report: inout BenchmarkReport
    ) async throws {
        let runs = options.sizedCeilingRuns
        guard runs > 0 else { return }
        for index in report.fanouts.indices {
            let fanout = report.fanouts[index]
            guard fanout.population == population.count, !BenchmarkReport.Rounds.isBroadcast(fanout), fanout.expected > 0,
                fanout.expected < options.ceilingRecords
            else { continue }
            let transactions =
                fanout.statusTasks ?? FanoutPlanner(configuration: base.planner).bulkTaskCount(audienceEstimate: fanout.expected)
            Console.say(
                "== the producers alone at the size of \(fanout.label): \(Console.count(fanout.expected)) records in \(transactions) transactions, best of \(runs)"
            )
            var best: BenchmarkReport.Ceiling?
            for run in 1...runs {
                let measured = try await measureCeiling(
                    base: base, topic: "\(runId).sized-\(index)-\(run).deliveries", population: population, redisPID: redisPID,
                    eventId: fanout.eventId, records: fanout.expected, transactions: transactions, idempotent: false
                )
                if measured.referencePerSecond > (best?.referencePerSecond ?? 0) { best = measured }
            }
            report.fanouts[index].sizedCeiling = best
            report.fanouts[index].sizedCeilingRuns = runs
        }
    }

    /// Herald's own producers alone, with the fan-out's settings, writing real delivery records
    /// to a topic of their own.
    ///
    /// `eventId` is the id the records carry (the broadcast it is compared with, so the records
    /// are as long as its deliveries); `workers` are alive around it (the rounds'),
    /// and `aroundTimed` is told when its timed part starts and ends (`BrokerCeiling`).
    private func measureCeiling(
        base: PipelineConfiguration, topic: String, population: SeedPopulation, redisPID: Int32?,
        eventId: String? = nil, records: Int? = nil, transactions: Int? = nil, workers: [WorkerProcess] = [],
        idempotent: Bool = true, aroundTimed: (@Sendable (Bool) -> Void)? = nil
    ) async throws -> BenchmarkReport.Ceiling {
        let records = records ?? options.ceilingRecords
        let producers = max(1, options.workers * base.bulkLanes)
        let meter = CPUMeter(
            brokerPID: MachineDescription.brokerPID(base.bootstrapServers), redisPIDs: redisPID.map { [$0] } ?? [], probe: probe)
        let waited = await meter.waitForQuiet(workers: workers)
        var ceiling = try await BrokerCeiling(
            eventId: eventId ?? names("main").broadcastEventId, configuration: base, topic: topic,
            partitions: Int(base.topics.deliveriesPartitions), records: records, producers: producers,
            // As many transactions as the planner would cut a broadcast of that many devices into.
            transactions: transactions ?? FanoutPlanner(configuration: base.planner).bulkTaskCount(audienceEstimate: records),
            population: population, meter: meter, clock: options.clock, logger: environment.logger,
            idempotent: idempotent, workers: workers, aroundTimed: aroundTimed
        ).run()
        ceiling.cpu?.quietWaitSeconds = waited
        let clock =
            options.clock == .committed
            ? "committed as the status reader saw it" : "seen by a read_committed consumer"
        Console.say(
            "  transactional: \(Console.count(Int(ceiling.transactionalPerSecond))) records/s until the last commit returned, \(Console.count(Int(ceiling.observedPerSecond ?? 0))) records/s \(clock)\(ceiling.idempotentPerSecond.map { "; idempotent: \(Console.count(Int($0))) records/s" } ?? "") (\(Console.fixed(ceiling.averageRecordBytes, 0)) B/record, \(producers) producers)"
        )
        return ceiling
    }

    private func write(_ report: BenchmarkReport) throws -> URL {
        try FileManager.default.createDirectory(at: environment.resultsDirectory, withIntermediateDirectories: true)
        let url = environment.resultsDirectory.appendingPathComponent("\(runId.replacingOccurrences(of: "bench-", with: "")).json")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(report).write(to: url)
        return url
    }

    /// Redis version and (when it runs on this machine) its process id, from `INFO server`.
    static func redisServerInfo(_ configuration: RedisConfiguration) async -> (version: String, pid: Int32?) {
        let connection = RedisConnection(configuration: configuration)
        defer { connection.close() }
        guard let info = try? await connection.send(.info("server")).string else { return ("unknown", nil) }
        let fields = RedisNodeUsage.infoFields(info)
        var pid = fields["process_id"].flatMap { Int32($0) }
        // Only a local process can be measured: check that the pid is a redis-server here.
        if let candidate = pid, !((try? String(contentsOfFile: "/proc/\(candidate)/cmdline", encoding: .utf8)) ?? "").contains("redis") {
            pid = nil
        }
        return (fields["redis_version"].map { "\($0)" } ?? "unknown", pid)
    }

    static func standingNotes(_ clock: BenchmarkOptions.Clock) -> [String] {
        let fanouts =
            switch clock {
            case .committed:
                "Fan-out times (clock `committed`) are measured from the publisher's clock at publish to the moment this process's read_committed consumer of the status topic had seen the progress record of every task of the event; each is written in the same transaction as the task's deliveries, so that is when the last delivery was committed. The deliveries are read and counted only after the clock stopped (`observed`; `countedSeconds` says when the count was complete). The broker ceiling is timed the same way: each of its transactions writes one progress record too."
            case .seen:
                "Fan-out times (clock `seen`) are measured from the publisher's clock at publish to the moment this process's read_committed consumer was handed the last delivery (the consumer reads while the event fans out, on the same machine; its CPU is counted under `benchmark`). The broker ceiling is timed by the same consumer."
            }
        return [
            fanouts,
            "One-user latencies are measured from the publisher's clock at publish to the moment this process's read_committed consumer of the express partitions was handed the delivery.",
            "The broker ceiling uses the fan-out's delivery-producer settings (idempotent, acks=all, linger, compression, batch sizes) with as many producers as the workers have bulk lanes and as many transactions as a broadcast has tasks. It is measured first and again after the fan-outs; ratios divide by the better of the two rates, each timed by the clock that times the fan-outs (the host's speed drifts during a run, and other work can only slow a measurement down).",
            "`hostProbeMilliseconds` is the median thread CPU time of a fixed piece of work (100,000 xorshift steps updating an 8 MiB table) that this process ran every 200 ms during the measurement: lower is a faster host. On a shared machine it moved by up to 1.5 x within minutes. The ratio estimated at the reference ceiling's host speed multiplies a fan-out's ratio by its probe time over the reference ceiling's; it is an estimate and is not judged.",
        ]
    }
}
