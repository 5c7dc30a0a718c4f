import Foundation
import HeraldDomain
import HeraldKafka
import HeraldPipeline
import HeraldRedis
import HeraldRegistry
import Logging
import Synchronization
import HeraldStreams

/// One population in its own topics and Redis prefix, with its own worker processes:
/// seed, start the workers, warm up, then publish the measured events, time each until its
/// last delivery was committed (or seen, `BenchmarkOptions.Clock`), and count its deliveries
/// in `herald.deliveries`.
///
/// The main phase measures everything (latency idle, broadcast, expression event, broadcast
/// under targeted load, memory); a memory-only phase seeds, broadcasts once and reads the
/// workers' peak RSS; a cluster phase broadcasts once on a Redis Cluster and reads what each
/// master did.
struct PopulationPhase {
    let population: SeedPopulation
    let kind: Kind
    let names: BenchmarkNames
    let configuration: PipelineConfiguration
    let options: BenchmarkOptions
    let environment: BenchmarkEnvironment
    /// The Redis servers whose CPU is measured (a cluster's masters and replicas).
    let redisPIDs: [Int32]
    let brokerPID: Int32?
    var probe: HostSpeedProbe? = nil
    /// Measures one ceiling of the rounds (`BenchmarkOptions.rounds`): its number (0...n), the
    /// event id its records carry, the workers alive meanwhile, and what to do when its timed
    /// part starts and ends (`BrokerCeiling.aroundTimed`). Nil: no rounds.
    var roundCeiling: RoundCeiling? = nil

    typealias RoundCeiling =
        @Sendable (
            _ round: Int, _ eventId: String, _ workers: [WorkerProcess], _ aroundTimed: @escaping @Sendable (Bool) -> Void
        ) async throws -> BenchmarkReport.Ceiling

    enum Kind: Equatable {
        case main
        case memory
        /// On a Redis Cluster of this many masters that the run started and discards afterwards.
        case cluster(masters: Int)
        /// A population whose registrations carry this many distinct templates: one broadcast
        /// that meets them all for the first time, and one more.
        case templates(distinct: Int)
        /// The population in two hubs, the default one without caps and one capped by `rules`
        /// (as `HERALD_FREQUENCY_CAPS` reads them): `pairs` bulk broadcasts to each, alternating,
        /// each capped one counting the alerts before it.
        case caps(rules: String, pairs: Int)
        /// A broadcast timed from its publish to every push accepted by the local APNs and FCM
        /// servers, once with each count of sender workers in `senders` (`reach(senders:expected:)`).
        case reach(senders: [Int])
    }

    private var isMain: Bool { kind == .main }
    private var broadcastLabel: String {
        switch kind {
        case .cluster(let masters): "broadcast on a Redis Cluster of \(masters) masters"
        case .templates(let distinct): "broadcast over \(Console.count(distinct)) templates"
        case .main, .memory, .reach: "broadcast"
        case .caps(let rules, _): Self.capsLabel(1, rules: rules)
        }
    }

    /// The label of the `index`th broadcast of a `caps` phase.
    static func capsLabel(_ index: Int, rules: String?) -> String {
        "bulk broadcast \(index), " + (rules.map { "hub capped \($0)" } ?? "hub without caps")
    }
    private var logger: Logger { environment.logger }
    var meter: CPUMeter { CPUMeter(brokerPID: brokerPID, redisPIDs: redisPIDs, probe: probe) }
    private var label: String { "R=\(Console.count(population.count))" }

    func run(into report: inout BenchmarkReport) async throws {
        Console.say("== population \(label): topics \(names.topicPrefix)*, Redis prefix \(names.redisPrefix)")
        let resources = Resources()
        do {
            try await body(into: &report, resources: resources)
        } catch {
            for worker in resources.workers where !worker.isRunning {
                Console.say("worker \(worker.spec.instanceId) exited; last log lines (\(worker.logFile.path)):\n\(worker.logTail())")
            }
            await cleanUp(resources)
            throw error
        }
        await cleanUp(resources)
    }

    /// What must be stopped and removed whatever happens.
    private final class Resources: @unchecked Sendable {
        var workers: [WorkerProcess] = []
        var watcher: DeliveryWatcher?
        var commits: CommitWatcher?
        var publisher: EventPublisher?
        var extraTopics: [String] = []
        var extraPrefixes: [String] = []

        func add(_ leftover: PhaseLeftover) {
            switch leftover {
            case .keys(let prefix): extraPrefixes.append(prefix)
            case .topic(let name): extraTopics.append(name)
            }
        }
    }

    private func body(into report: inout BenchmarkReport, resources: Resources) async throws {
        try await TopicProvisioner(
            topics: configuration.topics, bootstrapServers: configuration.bootstrapServers, extra: configuration.kafkaExtra, logger: logger
        ).provision()

        // 1. Seed.
        let seeder = PopulationSeeder(
            population: population, layout: configuration.layout, redis: configuration.redis, path: options.seedPath,
            batchSize: options.seedBatch, threads: options.seedThreads, logger: logger
        )
        let total = population.count
        let seedingStarted = meter.snapshot(workers: [])
        let memoryBefore = try await RedisNodeUsage.usedMemory(configuration.redis)
        var seeding = try await seeder.seed { done in
            Console.say("  seeding (\(options.seedPath.rawValue)) \(Console.count(done)) / \(Console.count(total))")
        }
        Console.say(
            "  seeded \(Console.count(total)) registrations in \(Console.fixed(seeding.seconds)) s (\(Console.count(Int(seeding.perSecond)))/s)"
        )
        let seedingCPU = meter.account(seedingStarted, meter.snapshot(workers: []))
        if case .cluster(let masters) = kind { seeding.path += ", Redis Cluster of \(masters) masters" }
        let settled = try await RedisBackgroundWork.waitUntilIdle(configuration.redis)
        if let settled, settled >= 0.5 {
            Console.say("  waited \(Console.fixed(settled)) s for Redis's background rewrite of the seeded data to end")
        } else if settled == nil {
            Console.say("  Redis was still rewriting its data in the background after 180 s; the fan-outs share the cores with it")
        }
        let memoryAfter = try await RedisNodeUsage.usedMemory(configuration.redis)
        report.seeding.append(
            BenchmarkReport.Seeding(
                population: total, summary: seeding, identityCheck: nil, cpu: seedingCPU, redisSettleSeconds: settled,
                redisBytesPerRegistration: Double(memoryAfter - memoryBefore) / Double(max(total, 1))
            ))

        // 2. Expected audiences, by brute force over the generated population.
        let prefix = names.redisPrefix
        var broadcast = BenchmarkEvents.broadcast(id: names.broadcastEventId)
        if case .caps = kind { broadcast.urgency = .bulk }
        let narrower = try BenchmarkEvents.expression(id: "\(prefix)-expression", source: options.expression)
        let loaded = BenchmarkEvents.broadcast(id: "\(prefix)-broadcast-loaded")
        let warmupTemplate = BenchmarkEvents.warmup(id: "warmup")
        let extras = try (isMain ? options.extraExpressions : []).enumerated().map { index, source in
            try BenchmarkEvents.expression(id: "\(prefix)-expression-\(index + 1)", source: source)
        }
        let burstSources = isMain ? options.burstSources : []
        let burst = try burstSources.enumerated().map { index, source in
            try BenchmarkEvents.expression(id: "\(prefix)-burst-\(index + 1)", source: source)
        }
        let expected = population.expectedDeliveries(for: [broadcast, narrower, warmupTemplate] + extras + burst)
        let burstExpected = Array(expected.suffix(burst.count))
        Console.say(
            "  expected deliveries: broadcast \(Console.count(expected[0])), `\(options.expression)` \(Console.count(expected[1])), warm-up \(expected[2])"
        )

        // 3. Watcher, publisher, workers.
        let watcher = try DeliveryWatcher(
            bootstrapServers: configuration.bootstrapServers, topic: configuration.topics.deliveries,
            partitions: Int(configuration.topics.deliveriesPartitions),
            priorityPartitions: configuration.expressDeliveryPartitions, extra: configuration.kafkaExtra, logger: logger
        )
        resources.watcher = watcher
        watcher.start()
        let commits = try CommitWatcher(
            bootstrapServers: configuration.bootstrapServers, topic: configuration.topics.status,
            partitions: Int(configuration.topics.statusPartitions), extra: configuration.kafkaExtra, logger: logger
        )
        resources.commits = commits
        commits.start()
        let publisher = try EventPublisher(
            bootstrapServers: configuration.bootstrapServers, topics: configuration.topics, extra: configuration.kafkaExtra, logger: logger
        )
        resources.publisher = publisher
        for index in 0..<options.workers {
            let spec = WorkerSpec(names: names, index: index)
            resources.workers.append(
                try WorkerProcess(launch: environment.workerLaunch(spec), spec: spec, logDirectory: environment.workDirectory))
        }
        Console.say(
            "  started \(options.workers) worker process(es): pids \(resources.workers.map { String($0.pid) }.joined(separator: ", "))")
        let context = Context(phase: self, watcher: watcher, commits: commits, publisher: publisher, workers: resources.workers)

        try await context.warmUp(expected: expected[2])

        if isMain && options.runLatency {
            let idle = try await context.targetedStream(label: "idle", stop: nil)
            report.latency.append(idle)
        }

        if case .reach(let senders) = kind {
            report.reach = try await context.reach(senders: senders, expected: expected[0], warmupExpected: expected[2])
            return
        }

        if case .caps(let rules, let pairs) = kind {
            try watcher.readPriorityPartitions(false)
            report.fanouts += try await context.capPairs(rules: rules, pairs: pairs, expected: expected[0]) { resources.add($0) }
            return
        }

        // 4. The measured broadcast (no one-user events: the express partitions are not read),
        // with what each Redis master did for it.
        try watcher.readPriorityPartitions(false)
        let baseline = resources.workers.map { $0.rssBytes ?? 0 }
        let usage = RedisNodeUsage.Meter(redis: configuration.redis)
        let usageBefore = try await usage.start()
        var measured = try await context.fanout(label: broadcastLabel, event: broadcast, expected: expected[0])
        measured.redisNodes = try await usage.finish(usageBefore)
        report.fanouts.append(measured)
        if case .cluster = kind { return }
        if case .templates = kind {
            // Every template is compiled by the first broadcast; the second finds them cached.
            let again = BenchmarkEvents.broadcast(id: names.broadcastEventId + "-again")
            report.fanouts.append(try await context.fanout(label: broadcastLabel + ", again", event: again, expected: expected[0]))
            return
        }
        report.memory.append(
            BenchmarkReport.Memory(
                population: total, baselineRSSBytes: baseline, peakRSSBytes: resources.workers.map { $0.peakRSSBytes ?? 0 }
            ))

        if kind == .memory {
            // The expression at this size too: a run at ten million compares its per-delivery
            // costs with these (linear growth).
            report.fanouts.append(try await context.fanout(label: "expression", event: narrower, expected: expected[1]))
        }
        if isMain {
            let usageBefore = try await usage.start()
            var expressionRun = try await context.fanout(label: "expression", event: narrower, expected: expected[1])
            expressionRun.redisNodes = try await usage.finish(usageBefore)
            report.fanouts.append(expressionRun)
            for (index, (source, event)) in zip(options.extraExpressions, extras).enumerated() {
                let before = try await usage.start()
                var run = try await context.fanout(label: "expression `\(source)`", event: event, expected: expected[3 + index])
                run.redisNodes = try await usage.finish(before)
                report.fanouts.append(run)
            }
            if options.runStop {
                report.stop = try await context.stopInFlight(
                    BenchmarkEvents.broadcast(id: "\(prefix)-stopped"), expected: expected[0])
            }
            if options.runRehearsal {
                report.rehearsal = try await context.rehearsal(BenchmarkEvents.broadcast(id: "\(prefix)-rehearsed"), expected: expected[0])
            }
            if !options.preemptionExpression.isEmpty {
                var bulk = BenchmarkEvents.broadcast(id: "\(prefix)-bulk")
                bulk.urgency = .bulk
                var alone = try BenchmarkEvents.expression(id: "\(prefix)-breaking-alone", source: options.preemptionExpression)
                alone.urgency = .breaking
                var during = alone
                during.id = "\(prefix)-breaking"
                report.preemption = try await context.preemption(
                    bulk: bulk, bulkExpected: expected[0], breaking: (alone, during),
                    breakingExpected: population.expectedDeliveries(for: [alone])[0])
            }
            if options.isolationAudience > 0 {
                report.isolation = try await context.hubIsolation(broadcastExpected: expected[0]) { resources.add($0) }
            }
            if !burst.isEmpty {
                let before = try await usage.start()
                var run = try await context.fanout(
                    label: "burst of \(burst.count) narrow events", events: Array(zip(burst, burstExpected)),
                    audience: "\(burst.count) events, each "
                        + (options.burstExpression.map { "`\($0)`" } ?? "`A && B && C` of three categories"))
                run.redisNodes = try await usage.finish(before)
                report.fanouts.append(run)
            }
            if options.runLatency {
                try watcher.readPriorityPartitions(true)
                try await context.primePriorityReader()
                let (duringBroadcast, loadedRuns) = try await context.targetedWhile(
                    label: "during-broadcast", fanouts: [("broadcast + targeted events", loaded, expected[0])])
                report.latency.append(duringBroadcast)
                report.fanouts += loadedRuns
                // The expressions again, one after the other: targeted fan-outs load the
                // workers and Redis differently (scanned slots, set operations). The first
                // one's row is reported; the others keep the load on.
                let again = [(options.expression, expected[1])] + zip(options.extraExpressions, expected[3...]).map { ($0, $1) }
                let (duringExpressions, expressionRuns) = try await context.targetedWhile(
                    label: "during-expressions",
                    fanouts: again.enumerated().map { index, entry in
                        (
                            "expression `\(entry.0)` + targeted events",
                            try BenchmarkEvents.expression(id: "\(prefix)-expression-loaded-\(index)", source: entry.0), entry.1
                        )
                    })
                report.latency.append(duringExpressions)
                report.fanouts += expressionRuns.prefix(1)
                if let index = report.memory.lastIndex(where: { $0.population == total }) {
                    report.memory[index].peakRSSBytes = resources.workers.map { $0.peakRSSBytes ?? 0 }
                }
            }
            // Last of the fan-outs: each round leaves another million deliveries on the broker,
            // and the embedded broker keeps them in memory and slows as they pile up (docs/performance.md).
            if let roundCeiling, options.rounds > 0 {
                report.rounds = try await context.rounds(
                    options.rounds, expected: expected[0], expression: options.roundExpressions ? expected[1] : nil, ceiling: roundCeiling)
            }
            if options.runReindex {
                report.reindex = try await ReindexPhase(
                    population: population, names: names, configuration: configuration, logger: logger
                ).run(
                    seededLayout: configuration.layout,
                    resources: { topic, prefix in
                        resources.extraTopics.append(topic)
                        resources.extraPrefixes.append(prefix)
                    })
            }
        }
    }

    private func cleanUp(_ resources: Resources) async {
        for worker in resources.workers { await worker.stop() }
        await resources.watcher?.stop()
        await resources.commits?.stop()
        await resources.publisher?.shutdown()
        // Destroy this process's own clients of the phase's topics before deleting them. A
        // consumer that is closed but not yet destroyed still has librdkafka threads; a fetch
        // response for a partition of a topic being deleted can carry a leader-change tag
        // without a topic id, which librdkafka handles with a NULL topic name
        // (rd_kafka_metadata_update_op -> strcmp(NULL)) and crashes on its own thread.
        resources.watcher = nil
        resources.commits = nil
        resources.publisher = nil
        guard !options.keepData else {
            Console.say("  keeping topics \(names.topicPrefix)* and Redis keys \(names.redisPrefix):* (--keep-data)")
            return
        }
        Console.say("  cleaning up topics and Redis keys of \(label)")
        var adminConfiguration = KafkaAdminConfiguration(bootstrapServers: configuration.bootstrapServers)
        adminConfiguration.extra = configuration.kafkaExtra
        if let admin = try? KafkaAdmin(configuration: adminConfiguration, logger: logger) {
            let topics = configuration.topics.all.map(\.name) + resources.extraTopics
            do { try await admin.deleteTopics(topics, ignoreMissing: true) } catch {
                logger.warning("deleting topics failed", metadata: ["error": "\(error)"])
            }
        }
        // A cluster phase's Redis is stopped and removed, data and all, right after the phase.
        let prefixes = if case .cluster = kind { [String]() } else { [names.redisPrefix] + resources.extraPrefixes }
        for prefix in prefixes {
            do { try await RedisKeyspace.deleteAll(prefix: prefix, redis: configuration.redis) } catch {
                logger.warning("removing Redis keys failed", metadata: ["pattern": "\(prefix):*", "error": "\(error)"])
            }
        }
    }

    // MARK: Measurements

    /// The live parts of a running phase.
    struct Context: Sendable {
        let phase: PopulationPhase
        let watcher: DeliveryWatcher
        let commits: CommitWatcher
        let publisher: EventPublisher
        let workers: [WorkerProcess]

        var options: BenchmarkOptions { phase.options }
        private var prefix: String { phase.names.redisPrefix }

        /// Publishes warm-up events (a bulk-lane one and an express one) until a round
        /// completes quickly: every consumer group has joined and the lanes are warm.
        func warmUp(expected: Int) async throws {
            let deadline = ContinuousClock.now + .seconds(options.warmupTimeoutSeconds)
            for attempt in 1...8 {
                let started = ContinuousClock.now
                let bulk = BenchmarkEvents.warmup(id: "\(prefix)-warmup-\(attempt)")
                let express = BenchmarkEvents.targeted(id: "\(prefix)-warmup-express-\(attempt)", latencyUser: 0)
                try await publisher.publish(bulk)
                try await publisher.publish(express)
                let remaining = max(.seconds(1), deadline - ContinuousClock.now)
                _ = try await awaitDeliveries(eventId: bulk.id!, expected: expected, timeout: remaining)
                _ = try await awaitDeliveries(eventId: express.id!, expected: 1, timeout: max(.seconds(1), deadline - ContinuousClock.now))
                let took = ContinuousClock.now - started
                Console.say("  warm-up \(attempt): \(Console.fixed(took.milliseconds, 0)) ms")
                if attempt >= 2 && took < .milliseconds(1_500) { return }
            }
        }

        /// Waits until the reader of the express partitions, just resumed, sees a one-user
        /// delivery again. A consumer resumed after a long pause took 0.1-0.8 s to fetch again
        /// (measured: the first one-user events of the loaded phase all seen at one instant,
        /// each built within 5-20 ms); that is the instrument, not Herald, so it is not timed.
        func primePriorityReader() async throws {
            let started = ContinuousClock.now
            let probe = BenchmarkEvents.targeted(id: "\(prefix)-probe-priority", latencyUser: 0)
            try await publisher.publish(probe)
            _ = try await awaitDeliveries(eventId: probe.id!, expected: 1, timeout: .seconds(30))
            Console.say("  priority reader resumed: probe seen after \(Console.fixed((ContinuousClock.now - started).milliseconds, 0)) ms")
        }

        /// Publishes `event`, times it (`BenchmarkOptions.Clock`) and counts its deliveries.
        ///
        /// With the `committed` clock the deliveries topic is not read while the event fans
        /// out: the clock stops when the status reader has seen every task's commit, and only
        /// then are the deliveries read and counted (exactly `expected`, or the table says so).
        func fanout(
            label: String, event: NotificationEvent, expected: Int, windows: FanoutWindows? = nil
        ) async throws -> BenchmarkReport.Fanout {
            try await fanout(
                label: label, events: [(event, expected)], audience: event.audience.expression.map { "\($0)" } ?? "broadcast",
                windows: windows)
        }

        /// Publishes `events` at one instant and times them as one fan-out, from the publish to
        /// the last commit (or delivery seen) of any of them; the row adds up their deliveries,
        /// targets, tasks and plans, and its worker clock spans them (the first task started,
        /// the last one done).
        func fanout(
            label: String, events: [(event: NotificationEvent, expected: Int)], audience: String, windows: FanoutWindows? = nil
        ) async throws -> BenchmarkReport.Fanout {
            let ids = events.map { $0.event.id! }
            let expected = events.map(\.expected).reduce(0, +)
            let timeout = Duration.seconds(options.eventTimeoutSeconds)
            let byCommits = options.clock == .committed
            Console.say(
                "  \(label): publishing \(ids.count == 1 ? ids[0] : "\(ids.count) events") to \(Console.count(expected)) devices")
            if byCommits { try watcher.readBulkPartitions(false) }
            let waited = await phase.meter.waitForQuiet(workers: workers)
            let before = phase.meter.snapshot(workers: workers)
            let published = Date()
            let publisher = publisher
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (event, _) in events { group.addTask { _ = try await publisher.publish(event, now: published) } }
                try await group.waitForAll()
            }
            let seconds: Double
            let first: Double
            let after: CPUMeter.Snapshot
            var committed: [CommitWatcher.EventCommits] = []
            var countedSeconds: Double?
            var stats: [DeliveryWatcher.EventStats] = []
            func awaitEveryDelivery() async throws {
                for (id, entry) in zip(ids, events) {
                    stats.append(try await awaitDeliveries(eventId: id, expected: entry.expected, timeout: timeout))
                }
            }
            if byCommits {
                for id in ids { committed.append(try await awaitCommits(eventId: id, timeout: timeout)) }
                after = phase.meter.snapshot(workers: workers)
                seconds = (committed.compactMap(\.lastCommitted).max() ?? Date()).timeIntervalSince(published)
                first = (committed.compactMap(\.firstCommitted).min() ?? Date()).timeIntervalSince(published)
                try watcher.readBulkPartitions(true)
                try await awaitEveryDelivery()
                countedSeconds = (stats.compactMap(\.lastSeen).max() ?? Date()).timeIntervalSince(published)
            } else {
                try await awaitEveryDelivery()
                after = phase.meter.snapshot(workers: workers)
                seconds = (stats.compactMap(\.lastSeen).max() ?? Date()).timeIntervalSince(published)
                first = (stats.compactMap(\.firstSeen).min() ?? Date()).timeIntervalSince(published)
            }
            windows?.add(published...published.addingTimeInterval(seconds))
            // Anything beyond the expected count (a duplicate) arrives right behind the rest.
            try await Task.sleep(for: .milliseconds(500))
            let finals = ids.map { watcher.stats($0) }
            let observed = finals.map(\.count).reduce(0, +)
            let statuses = await finalStatuses(ids, hub: events.first?.event.hub ?? .default)
            let complete = statuses.count == ids.count
            let perSecond = Double(expected) / max(seconds, 1e-9)
            let how = byCommits ? "committed" : "seen"
            Console.say(
                "  \(label): \(Console.count(observed)) deliveries, \(how) in \(Console.fixed(seconds, 2)) s (\(Console.count(Int(perSecond)))/s)"
            )
            func sum(_ value: (StatusRecord) -> Int) -> Int? { complete ? statuses.map(value).reduce(0, +) : nil }
            func since(_ dates: [Date], _ pick: ([Double]) -> Double?) -> Double? {
                dates.count == ids.count ? pick(dates.map { $0.timeIntervalSince(published) }) : nil
            }
            let plans = statuses.compactMap(\.plans).reduce(into: [String: Int]()) { total, plans in
                total.merge(plans, uniquingKeysWith: +)
            }
            let valueBytes = finals.map(\.valueBytes).reduce(0, +)
            return BenchmarkReport.Fanout(
                label: label, population: phase.population.count, eventId: ids.count == 1 ? ids[0] : "\(ids[0]) and \(ids.count - 1) more",
                audience: audience, expected: expected, observed: observed, firstDeliverySeconds: first, seconds: seconds,
                deliveriesPerSecond: perSecond, ratioToCeiling: nil,
                statusTargets: sum { $0.targets.total }, statusTasks: sum { $0.tasks.planned },
                acceptedSeconds: since(statuses.map(\.timings.acceptedAt)) { $0.max() },
                renderedFirstSeconds: since(statuses.compactMap(\.timings.firstDeliveryAt)) { $0.min() },
                taskStartedSeconds: since(committed.compactMap(\.firstStarted)) { $0.min() },
                plannerCommitSeconds: since(committed.compactMap(\.plannerCommitted)) { $0.max() },
                workerCompletedSeconds: since(statuses.compactMap(\.timings.completedAt)) { $0.max() },
                seenAtWorkerCompletion: byCommits || ids.count > 1
                    ? nil : statuses.first?.timings.completedAt.map { stats[0].count(at: $0) },
                cpu: {
                    var cpu = phase.meter.account(before, after)
                    cpu.quietWaitSeconds = waited
                    return cpu
                }(),
                clock: options.clock.rawValue, committedDeliveries: byCommits ? committed.map(\.delivered).reduce(0, +) : nil,
                countedSeconds: countedSeconds,
                averageRecordBytes: observed > 0 ? Double(valueBytes) / Double(observed) : nil,
                plans: plans.isEmpty ? nil : plans
            )
        }

        /// `count` broadcasts, each between two ceilings of its own: ceiling, broadcast,
        /// ceiling, broadcast, ..., ceiling (`BenchmarkReport.Rounds`). With `expression` (its
        /// expected deliveries), each broadcast is followed by a ceiling and the expression.
        ///
        /// While a ceiling is timed (about a second) the workers are stopped (`SIGSTOP`) and this
        /// phase's readers paused, so it runs as alone as the run's first ceiling, which runs
        /// before any worker exists: an idle worker's and an idle reader's 5 ms fetches cost
        /// the broker up to a tenth of a core each (docs/performance.md, "The embedded broker").
        func rounds(_ count: Int, expected: Int, expression: Int?, ceiling: RoundCeiling) async throws -> BenchmarkReport.Rounds {
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

        /// The one-recipient stream while `fanouts` (label, event, expected deliveries) run one
        /// after the other; only the events published while one of them was fanning out (from
        /// its publish to its last delivery) are counted, not those of the pauses between.
        func targetedWhile(
            label: String, fanouts: [(label: String, event: NotificationEvent, expected: Int)]
        ) async throws -> (BenchmarkReport.Latency, [BenchmarkReport.Fanout]) {
            let done = StopFlag()
            let windows = FanoutWindows()
            async let stream = targetedStream(label: label, stop: done, windows: windows)
            var runs: [BenchmarkReport.Fanout] = []
            do {
                for fanout in fanouts {
                    runs.append(
                        try await self.fanout(label: fanout.label, event: fanout.event, expected: fanout.expected, windows: windows))
                }
                done.set()
            } catch {
                done.set()
                _ = try? await stream
                throw error
            }
            return (try await stream, runs)
        }

        /// One-recipient events at `options.latencyRate` per second, for `latencySeconds` or
        /// until `stop` is set; each measured from its `publishedAt` to the moment the watcher
        /// saw its delivery.
        ///
        /// With `windows`, only the events published inside one of them are counted.
        func targetedStream(label: String, stop: StopFlag?, windows: FanoutWindows? = nil) async throws -> BenchmarkReport.Latency {
            let rate = max(1, options.latencyRate)
            let interval = Duration.seconds(1) / rate
            let limit = options.latencySeconds * rate
            let users = phase.population.latencyUsers
            let start = ContinuousClock.now
            var published: [(id: String, at: Date)] = []
            Console.say("  latency (\(label)): \(rate) one-recipient events/s")
            try await withThrowingTaskGroup(of: Void.self) { group in
                var sequence = 0
                while sequence < limit && !(stop?.isSet ?? false) {
                    let event = BenchmarkEvents.targeted(id: "\(prefix)-lat-\(label)-\(sequence)", latencyUser: sequence % users)
                    let at = Date()
                    published.append((event.id!, at))
                    group.addTask { try await publisher.publish(event, now: at) }
                    sequence += 1
                    try await Task.sleep(until: start + interval * sequence, clock: .continuous)
                }
                try await group.waitForAll()
            }
            let deadline = ContinuousClock.now + .seconds(30)
            while published.contains(where: { watcher.stats($0.id).count == 0 }) && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            if let windows { published = published.filter { windows.contains($0.at) } }
            // Per event, in publish order: publish to seen, to rendered (the worker's clock), to
            // accepted (the planner's status).
            let seenEach = published.map { entry in
                watcher.stats(entry.id).firstSeen.map { $0.timeIntervalSince(entry.at) * 1_000 }
            }
            let renderedEach = published.map { entry -> Double? in
                guard let bytes = watcher.stats(entry.id).firstRecord,
                    let record = try? JSONDecoder().decode(DeliveryRecord.self, from: Data(bytes))
                else { return nil }
                return record.renderedAt.timeIntervalSince(entry.at) * 1_000
            }
            let acceptedEach = await acceptedMilliseconds(published)
            let latencies = seenEach.compactMap { $0 }
            let toRendered = renderedEach.compactMap { $0 }
            let toAccepted = acceptedEach.compactMap { $0 }
            let firstPublish = published.first?.at ?? Date()
            let samples = published.indices.map { index in
                BenchmarkReport.LatencySample(
                    publishedSeconds: published[index].at.timeIntervalSince(firstPublish),
                    acceptedMilliseconds: acceptedEach[index], renderedMilliseconds: renderedEach[index],
                    seenMilliseconds: seenEach[index]
                )
            }
            let percentiles = Percentiles(latencies)
            let rendered = Percentiles(toRendered)
            let accepted = Percentiles(toAccepted)
            let result = BenchmarkReport.Latency(
                label: label, events: published.count, seen: latencies.count,
                p50Milliseconds: percentiles.value(50), p99Milliseconds: percentiles.value(99), maxMilliseconds: percentiles.max,
                renderedP50Milliseconds: toRendered.isEmpty ? nil : rendered.value(50),
                renderedP99Milliseconds: toRendered.isEmpty ? nil : rendered.value(99),
                acceptedP50Milliseconds: toAccepted.isEmpty ? nil : accepted.value(50),
                acceptedP99Milliseconds: toAccepted.isEmpty ? nil : accepted.value(99),
                samples: samples
            )
            Console.say(
                "  latency (\(label)): \(latencies.count)/\(published.count) seen, p50 \(Console.fixed(result.p50Milliseconds)) ms, p99 \(Console.fixed(result.p99Milliseconds)) ms, max \(Console.fixed(result.maxMilliseconds)) ms; publish to accepted p50 \(Console.fixed(accepted.value(50))) / p99 \(Console.fixed(accepted.value(99))) ms, to rendered p50 \(Console.fixed(rendered.value(50))) / p99 \(Console.fixed(rendered.value(99))) ms"
            )
            // The slowest events, to tell a slow planner (accepted), a slow worker (rendered) and
            // a late read (seen) apart, and where in the phase they were.
            for sample in samples.sorted(by: { ($0.seenMilliseconds ?? .infinity) > ($1.seenMilliseconds ?? .infinity) }).prefix(3) {
                Console.say(
                    "    slowest: published at +\(Console.fixed(sample.publishedSeconds, 2)) s, accepted \(sample.acceptedMilliseconds.map { Console.fixed($0) } ?? "-") / rendered \(sample.renderedMilliseconds.map { Console.fixed($0) } ?? "-") / seen \(sample.seenMilliseconds.map { Console.fixed($0) } ?? "never") ms"
                )
            }
            return result
        }

        /// Waits for the deliveries, failing early (with the worker's log) if a worker died.
        /// Workers are asked whether they are alive every 100 ms, not at every 2 ms look: with
        /// `--clock seen` this wait runs while the fan-out is measured, on the same cores.
        func awaitDeliveries(eventId: String, expected: Int, timeout: Duration) async throws -> DeliveryWatcher.EventStats {
            let deadline = ContinuousClock.now + timeout
            var nextCheck = ContinuousClock.now
            while true {
                let stats = watcher.stats(eventId)
                if stats.count >= expected { return stats }
                if ContinuousClock.now >= nextCheck {
                    nextCheck = ContinuousClock.now + .milliseconds(100)
                    if let dead = workers.first(where: { !$0.isRunning }) {
                        throw BenchmarkError("worker \(dead.spec.instanceId) exited while \(eventId) was in flight", code: "worker_exited")
                    }
                }
                if ContinuousClock.now >= deadline {
                    // Tell "the worker did not deliver" apart from "the broker did not make the
                    // committed deliveries visible to read_committed readers".
                    let status = await finalStatuses([eventId]).first
                    let worker =
                        status.map { "the worker reports \($0.state.rawValue) with \($0.targets.total) targets" }
                        ?? "the worker reports no final status"
                    throw BenchmarkError(
                        "event \(eventId): saw \(stats.count) of \(expected) expected deliveries within \(timeout); \(worker)",
                        code: "bench_timeout"
                    )
                }
                try await Task.sleep(for: .milliseconds(2))
            }
        }

        /// Waits until the status reader saw the commit of every task of `eventId`, failing early
        /// (with the worker's log) if a worker died.
        func awaitCommits(eventId: String, timeout: Duration) async throws -> CommitWatcher.EventCommits {
            try await commits.waitForAll(eventId: eventId, timeout: timeout) {
                if let dead = workers.first(where: { !$0.isRunning }) {
                    throw BenchmarkError("worker \(dead.spec.instanceId) exited while \(eventId) was in flight", code: "worker_exited")
                }
            }
        }

        /// Publishes `event` (a broadcast), and once its first task has reported sets its stop key
        /// as `DELETE /v1/notifications/{id}` does: how long until every task reported, and what
        /// got through.
        func stopInFlight(_ event: NotificationEvent, expected: Int) async throws -> BenchmarkReport.Stop {
            let eventId = event.id ?? ""
            _ = try await publisher.publish(event)
            let deadline = ContinuousClock.now + .seconds(options.eventTimeoutSeconds)
            while commits.commits(eventId).tasks.isEmpty {
                guard ContinuousClock.now < deadline else {
                    throw BenchmarkError("no task of \(eventId) reported within \(options.eventTimeoutSeconds) s", code: "fanout_timeout")
                }
                try await Task.sleep(for: .milliseconds(2))
            }
            let pool = RedisConnectionPool(configuration: phase.configuration.redis, size: 1)
            defer { pool.shutdown() }
            let key = phase.configuration.layout.stopKey(eventId: eventId)
            let before = commits.commits(eventId)
            let stoppedAt = Date()
            _ = try await pool.withConnection { try await $0.send(RedisCommand("SET", key, "1", "EX", "600")) }
            let after = try await awaitCommits(eventId: eventId, timeout: .seconds(options.eventTimeoutSeconds))
            Console.say(
                "  stopped \(eventId) after \(before.tasks.count) of \(after.taskCount ?? 0) tasks: \(Console.count(after.delivered)) of \(Console.count(expected)) delivered"
            )
            return BenchmarkReport.Stop(
                audience: expected, tasks: after.taskCount ?? 0, tasksBeforeStop: before.tasks.count, deliveredBeforeStop: before.delivered,
                secondsToLastReport: max(0, (after.lastCommitted ?? stoppedAt).timeIntervalSince(stoppedAt)), delivered: after.delivered,
                stoppedTasks: after.stopped)
        }

        /// Publishes `event` as a rehearsal (`dryRun`): from the publish to its last task's report,
        /// and what its status counted.
        func rehearsal(_ event: NotificationEvent, expected: Int) async throws -> BenchmarkReport.Rehearsal {
            _ = await phase.meter.waitForQuiet(workers: workers)
            let published = Date()
            let receipt = try await publisher.publish(event, now: published, rehearsal: true)
            let id = DerivedSend.rehearsal.eventId(of: receipt.eventId, partition: receipt.partition, offset: receipt.offset)
            let commits = try await awaitCommits(eventId: id, timeout: .seconds(options.eventTimeoutSeconds))
            let status = await finalStatuses([id]).first
            let pool = RedisConnectionPool(configuration: phase.configuration.redis, size: 1)
            defer { pool.shutdown() }
            let previews = try await StatusReader(pool: pool, layout: phase.configuration.layout).previews(eventId: id)
            let result = BenchmarkReport.Rehearsal(
                audience: expected, counted: status?.targets.total ?? commits.delivered, tasks: commits.taskCount ?? 0,
                seconds: max(0, (commits.lastCommitted ?? published).timeIntervalSince(published)), previews: previews.count)
            Console.say("  rehearsal \(id): \(Console.count(result.counted)) counted in \(Console.fixed(result.seconds, 2)) s")
            return result
        }

        /// `breaking.alone` with nothing else running, then the `bulk` broadcast, and once its
        /// first task has reported `breaking.during` (the same event under another id): each
        /// timed from its publish to its last task's commit, and every delivery counted.
        func preemption(
            bulk: NotificationEvent, bulkExpected: Int, breaking: (alone: NotificationEvent, during: NotificationEvent),
            breakingExpected: Int
        ) async throws -> BenchmarkReport.Preemption {
            // The breaking deliveries go to the express lanes' partitions.
            try watcher.readPriorityPartitions(true)
            let alone = try await fanout(label: "breaking alone", event: breaking.alone, expected: breakingExpected)
            let during = try await alert(
                breaking.during, expected: breakingExpected, duringBroadcast: bulk, broadcastExpected: bulkExpected)
            let result = BenchmarkReport.Preemption(
                breakingAudience: breakingExpected, bulkAudience: bulkExpected, aloneSeconds: alone.seconds,
                duringSeconds: during.alertSeconds, bulkSeconds: during.broadcastSeconds, breakingDelivered: during.alertDelivered,
                bulkDelivered: during.broadcastDelivered)
            Console.say(
                "  preemption: breaking \(Console.fixed(result.duringSeconds, 2)) s during the bulk broadcast, \(Console.fixed(result.aloneSeconds, 2)) s alone"
            )
            return result
        }

        /// What `alert(_:expected:duringBroadcast:broadcastExpected:)` measured.
        struct AlertDuringBroadcast {
            /// Publish to the last task's commit of the alert, and of the broadcast.
            var alertSeconds: Double
            var broadcastSeconds: Double
            /// From the alert's publish to the broadcast's last commit.
            var broadcastSecondsAfterAlert: Double
            var alertDelivered: Int
            var broadcastDelivered: Int
        }

        /// Publishes `broadcast`, and once its first task has reported `alert`: each timed from
        /// its publish to its last task's commit, then every delivery of both counted.
        func alert(
            _ alert: NotificationEvent, expected alertExpected: Int, duringBroadcast broadcast: NotificationEvent, broadcastExpected: Int
        ) async throws -> AlertDuringBroadcast {
            let timeout = Duration.seconds(options.eventTimeoutSeconds)
            let broadcastId = broadcast.id ?? ""
            let alertId = alert.id ?? ""
            Console.say(
                "  \(broadcastId) to \(Console.count(broadcastExpected)), then \(alertId) to \(Console.count(alertExpected))")
            if options.clock == .committed { try watcher.readBulkPartitions(false) }
            _ = await phase.meter.waitForQuiet(workers: workers)
            let broadcastPublished = Date()
            _ = try await publisher.publish(broadcast, now: broadcastPublished)
            let deadline = ContinuousClock.now + timeout
            while commits.commits(broadcastId).tasks.isEmpty {
                guard ContinuousClock.now < deadline else {
                    throw BenchmarkError(
                        "no task of \(broadcastId) reported within \(options.eventTimeoutSeconds) s", code: "fanout_timeout")
                }
                try await Task.sleep(for: .milliseconds(2))
            }
            let published = Date()
            _ = try await publisher.publish(alert, now: published)
            let alertCommits = try await awaitCommits(eventId: alertId, timeout: timeout)
            let broadcastCommits = try await awaitCommits(eventId: broadcastId, timeout: timeout)
            try watcher.readBulkPartitions(true)
            let alertSeen = try await awaitDeliveries(eventId: alertId, expected: alertExpected, timeout: timeout)
            let broadcastSeen = try await awaitDeliveries(eventId: broadcastId, expected: broadcastExpected, timeout: timeout)
            // Anything beyond the expected counts (a duplicate) arrives right behind the rest.
            try await Task.sleep(for: .milliseconds(500))
            let broadcastDone = broadcastCommits.lastCommitted ?? published
            return AlertDuringBroadcast(
                alertSeconds: max(0, (alertCommits.lastCommitted ?? published).timeIntervalSince(published)),
                broadcastSeconds: max(0, broadcastDone.timeIntervalSince(broadcastPublished)),
                broadcastSecondsAfterAlert: max(0, broadcastDone.timeIntervalSince(published)),
                alertDelivered: max(alertSeen.count, watcher.stats(alertId).count),
                broadcastDelivered: max(broadcastSeen.count, watcher.stats(broadcastId).count))
        }

        /// Publish to the planner's `acceptedAt` of each event, nil where its status is missing.
        private func acceptedMilliseconds(_ published: [(id: String, at: Date)]) async -> [Double?] {
            let pool = RedisConnectionPool(configuration: phase.configuration.redis, size: 1)
            defer { pool.shutdown() }
            let reader = StatusReader(pool: pool, layout: phase.configuration.layout)
            var result: [Double?] = []
            for entry in published {
                let status = try? await reader.status(eventId: entry.id)
                result.append(status.map { $0.timings.acceptedAt.timeIntervalSince(entry.at) * 1_000 })
            }
            return result
        }

        /// The terminal status of each of `eventIds` (events of `hub`) that has one within 5 s,
        /// read on one connection.
        func finalStatuses(_ eventIds: [String], hub: HubName = .default) async -> [StatusRecord] {
            let pool = RedisConnectionPool(configuration: phase.configuration.redis, size: 1)
            defer { pool.shutdown() }
            let reader = StatusReader(pool: pool, layout: phase.configuration.layout.hub(hub))
            let deadline = ContinuousClock.now + .seconds(5)
            var statuses: [StatusRecord] = []
            for eventId in eventIds {
                while ContinuousClock.now < deadline {
                    if let status = try? await reader.status(eventId: eventId), status.state.isTerminal {
                        statuses.append(status)
                        break
                    }
                    try? await Task.sleep(for: .milliseconds(50))
                }
            }
            return statuses
        }
    }
}
