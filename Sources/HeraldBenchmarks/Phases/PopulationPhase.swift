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
        report.seeding.append(try await seed())
        let events = try Events(self)
        Console.say(
            "  expected deliveries: broadcast \(Console.count(events.expected[0])), `\(options.expression)` \(Console.count(events.expected[1])), warm-up \(events.expected[2])"
        )
        let context = try start(resources)
        try await context.warmUp(expected: events.expected[2])
        if isMain && options.runLatency {
            report.latency.append(try await context.targetedStream(label: "idle", stop: nil))
        }
        switch kind {
        case .reach(let senders):
            report.reach = try await context.reach(senders: senders, expected: events.expected[0], warmupExpected: events.expected[2])
            return
        case .caps(let rules, let pairs):
            try context.watcher.readPriorityPartitions(false)
            report.fanouts += try await context.capPairs(rules: rules, pairs: pairs, expected: events.expected[0]) { resources.add($0) }
            return
        case .main, .memory, .cluster, .templates:
            break
        }

        // The measured broadcast (no one-user events: the express partitions are not read),
        // with what each Redis master did for it.
        try context.watcher.readPriorityPartitions(false)
        let baseline = resources.workers.map { $0.rssBytes ?? 0 }
        let usage = RedisNodeUsage.Meter(redis: configuration.redis)
        report.fanouts.append(
            try await measured(usage) {
                try await context.fanout(label: broadcastLabel, event: events.broadcast, expected: events.expected[0])
            })
        if case .cluster = kind { return }
        if case .templates = kind {
            // Every template is compiled by the first broadcast; the second finds them cached.
            let again = BenchmarkEvents.broadcast(id: names.broadcastEventId + "-again")
            report.fanouts.append(try await context.fanout(label: broadcastLabel + ", again", event: again, expected: events.expected[0]))
            return
        }
        report.memory.append(
            BenchmarkReport.Memory(
                population: population.count, baselineRSSBytes: baseline, peakRSSBytes: resources.workers.map { $0.peakRSSBytes ?? 0 }
            ))
        if kind == .memory {
            // The expression at this size too: a run at ten million compares its per-delivery
            // costs with these (linear growth).
            report.fanouts.append(try await context.fanout(label: "expression", event: events.narrower, expected: events.expected[1]))
        }
        if isMain { try await mainRows(context, events, usage: usage, into: &report, resources: resources) }
    }

    /// The events of a phase, and how many deliveries each should make, by brute force over
    /// the generated population: `expected` holds the broadcast's, the expression's, the
    /// warm-up's, then each extra expression's and each burst event's.
    private struct Events {
        var broadcast: NotificationEvent
        let narrower: NotificationEvent
        let loaded: NotificationEvent
        let extras: [NotificationEvent]
        let burst: [NotificationEvent]
        let expected: [Int]
        var burstExpected: [Int] { Array(expected.suffix(burst.count)) }

        init(_ phase: PopulationPhase) throws {
            let prefix = phase.names.redisPrefix
            let options = phase.options
            broadcast = BenchmarkEvents.broadcast(id: phase.names.broadcastEventId)
            if case .caps = phase.kind { broadcast.urgency = .bulk }
            narrower = try BenchmarkEvents.expression(id: "\(prefix)-expression", source: options.expression)
            loaded = BenchmarkEvents.broadcast(id: "\(prefix)-broadcast-loaded")
            extras = try (phase.isMain ? options.extraExpressions : []).enumerated().map { index, source in
                try BenchmarkEvents.expression(id: "\(prefix)-expression-\(index + 1)", source: source)
            }
            burst = try (phase.isMain ? options.burstSources : []).enumerated().map { index, source in
                try BenchmarkEvents.expression(id: "\(prefix)-burst-\(index + 1)", source: source)
            }
            expected = phase.population.expectedDeliveries(
                for: [broadcast, narrower, BenchmarkEvents.warmup(id: "warmup")] + extras + burst)
        }
    }

    /// Seeds the population into Redis and waits for Redis's background rewrite of it to end.
    private func seed() async throws -> BenchmarkReport.Seeding {
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
        return BenchmarkReport.Seeding(
            population: total, summary: seeding, identityCheck: nil, cpu: seedingCPU, redisSettleSeconds: settled,
            redisBytesPerRegistration: Double(memoryAfter - memoryBefore) / Double(max(total, 1))
        )
    }

    /// Starts the phase's readers (deliveries, commits), its publisher and its workers.
    private func start(_ resources: Resources) throws -> Context {
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
        return Context(phase: self, watcher: watcher, commits: commits, publisher: publisher, workers: resources.workers)
    }

    /// A fan-out row with what each Redis master did for it.
    private func measured(
        _ usage: RedisNodeUsage.Meter, _ fanout: () async throws -> BenchmarkReport.Fanout
    ) async throws -> BenchmarkReport.Fanout {
        let before = try await usage.start()
        var run = try await fanout()
        run.redisNodes = try await usage.finish(before)
        return run
    }

    /// The main phase's rows after its broadcast: expressions, the alert controls, hubs, the
    /// burst, one-user latency under load, rounds and the reindex.
    private func mainRows(
        _ context: Context, _ events: Events, usage: RedisNodeUsage.Meter, into report: inout BenchmarkReport, resources: Resources
    ) async throws {
        let expected = events.expected
        report.fanouts.append(
            try await measured(usage) { try await context.fanout(label: "expression", event: events.narrower, expected: expected[1]) })
        for (index, (source, event)) in zip(options.extraExpressions, events.extras).enumerated() {
            report.fanouts.append(
                try await measured(usage) {
                    try await context.fanout(label: "expression `\(source)`", event: event, expected: expected[3 + index])
                })
        }
        try await controlRows(context, broadcastExpected: expected[0], into: &report, resources: resources)
        if !events.burst.isEmpty {
            let audience =
                "\(events.burst.count) events, each "
                + (options.burstExpression.map { "`\($0)`" } ?? "`A && B && C` of three categories")
            report.fanouts.append(
                try await measured(usage) {
                    try await context.fanout(
                        label: "burst of \(events.burst.count) narrow events", events: Array(zip(events.burst, events.burstExpected)),
                        audience: audience)
                })
        }
        if options.runLatency { try await loadedLatencyRows(context, events, into: &report, resources: resources) }
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

    /// Stopping in flight, rehearsing, breaking news during a bulk broadcast, and hub isolation.
    private func controlRows(
        _ context: Context, broadcastExpected: Int, into report: inout BenchmarkReport, resources: Resources
    ) async throws {
        let prefix = names.redisPrefix
        if options.runStop {
            report.stop = try await context.stopInFlight(BenchmarkEvents.broadcast(id: "\(prefix)-stopped"), expected: broadcastExpected)
        }
        if options.runRehearsal {
            report.rehearsal = try await context.rehearsal(
                BenchmarkEvents.broadcast(id: "\(prefix)-rehearsed"), expected: broadcastExpected)
        }
        if !options.preemptionExpression.isEmpty {
            var bulk = BenchmarkEvents.broadcast(id: "\(prefix)-bulk")
            bulk.urgency = .bulk
            var alone = try BenchmarkEvents.expression(id: "\(prefix)-breaking-alone", source: options.preemptionExpression)
            alone.urgency = .breaking
            var during = alone
            during.id = "\(prefix)-breaking"
            report.preemption = try await context.preemption(
                bulk: bulk, bulkExpected: broadcastExpected, breaking: (alone, during),
                breakingExpected: population.expectedDeliveries(for: [alone])[0])
        }
        if options.isolationAudience > 0 {
            report.isolation = try await context.hubIsolation(broadcastExpected: broadcastExpected) { resources.add($0) }
        }
    }

    /// One-user events while a broadcast runs, then while the expressions run again.
    private func loadedLatencyRows(
        _ context: Context, _ events: Events, into report: inout BenchmarkReport, resources: Resources
    ) async throws {
        let expected = events.expected
        try context.watcher.readPriorityPartitions(true)
        try await context.primePriorityReader()
        let (duringBroadcast, loadedRuns) = try await context.targetedWhile(
            label: "during-broadcast", fanouts: [("broadcast + targeted events", events.loaded, expected[0])])
        report.latency.append(duringBroadcast)
        report.fanouts += loadedRuns
        // The expressions again, one after the other: targeted fan-outs load the workers and
        // Redis differently (scanned slots, set operations). The first one's row is reported;
        // the others keep the load on.
        let again = [(options.expression, expected[1])] + zip(options.extraExpressions, expected[3...]).map { ($0, $1) }
        let (duringExpressions, expressionRuns) = try await context.targetedWhile(
            label: "during-expressions",
            fanouts: again.enumerated().map { index, entry in
                (
                    "expression `\(entry.0)` + targeted events",
                    try BenchmarkEvents.expression(id: "\(names.redisPrefix)-expression-loaded-\(index)", source: entry.0), entry.1
                )
            })
        report.latency.append(duringExpressions)
        report.fanouts += expressionRuns.prefix(1)
        if let index = report.memory.lastIndex(where: { $0.population == population.count }) {
            report.memory[index].peakRSSBytes = resources.workers.map { $0.peakRSSBytes ?? 0 }
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
        var prefix: String { phase.names.redisPrefix }

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
