import ArgumentParser
import Foundation
import HeraldApp
import HeraldBenchmarks
import HeraldCommandLine
import HeraldPipeline
import Logging

/// `herald-bench` (also reached as `herald bench`): every performance figure of
/// docs/performance.md in one run, printed as one table and written to `bench/results/<run>.json`.
/// A separate executable, so the production `herald` binary links no benchmark code.
@main
struct BenchCommand: AsyncParsableCommand {
    /// Setting flags (`--kafka-brokers …`) are taken out before the harness's own options.
    static func main() async { await mainTakingSettingFlags() }

    static let configuration = CommandConfiguration(
        commandName: "herald-bench",
        abstract: "Measure Herald against the broker's own ceiling: broadcast, latency, memory, micro.",
        discussion: """
            Needs a Kafka-compatible broker and Redis (`make bench` starts the embedded ones). Every \
            run uses its own topics, consumer ids and Redis prefix and removes them afterwards. \
            Worker processes are spawned from the `herald` executable next to this one (`herald worker`) \
            so their memory is measured alone; the idle row, last, also runs `herald api`. See \
            docs/performance.md for what each figure means.
            """
    )

    @OptionGroup var settings: SettingsOptions

    @Option(help: "Registrations of the main population.") var registrations: Int = 1_000_000
    @Option(help: "Worker processes to spawn.") var workers: Int = 1
    @Option(help: "Partitions of the task topic; the deliveries topic gets 2 more (the express ones).") var partitions: Int = 8
    @Option(help: "Populations whose worker peak RSS is measured, comma separated.") var memorySizes: String = "100000,1000000"
    @Option(
        help:
            "Template variants of the template-diversity populations, comma separated: each population carries about six times as many distinct templates and is broadcast to twice; the rows compare each with the first (empty: none)."
    ) var templateVariants: String = "1,1000"
    @Option(help: "Registrations of each template-diversity population.") var templatePopulation: Int = 100_000
    @Option(
        help:
            "Registrations of the frequency-cap population, seeded into a hub without caps and one capped 10/86400:bulk, whose bulk broadcasts alternate and are compared pair by pair (0: none)."
    ) var capPopulation: Int = 1_000_000
    @Option(help: "Pairs of broadcasts (without caps, with caps) of the frequency-cap phase, 1 to 9.") var capPairs: Int = 5
    @Option(help: "Records written by the broker-ceiling phase.") var ceilingRecords: Int = 400_000
    @Option(
        help:
            "Times each expression narrower than --ceiling-records is compared with the producers alone writing as many records in as many transactions (the best kept; 0: none)."
    ) var sizedCeilings: Int = 3
    @Option(help: "Extra broadcasts of the main population, each between two ceilings of its own (0: none).") var rounds: Int = 3
    @Option(
        help:
            "Masters of a Redis Cluster (plus as many replicas) started by scripts/redis-cluster to run the main broadcast on once more, next to the single node (0: none)."
    )
    var redisCluster: Int = 3
    @Option(help: "Schedules published due in the same second, released by one scheduler worker (0: none).") var schedules: Int = 10_000
    @Option(help: "Seconds ahead of their time the schedules are published.") var scheduleLead: Int = 30
    @Option(help: "Deliveries one sender worker pushes to the local APNs server, beside h2load's ceiling (0: none).")
    var senderDeliveries: Int = 200_000
    @Option(
        help:
            "Deliveries one sender worker encrypts and pushes to the local Web Push service, beside h2load's ceiling and pywebpush's encryption rate (0: none)."
    )
    var webPushDeliveries: Int = 200_000
    @Option(
        help:
            "Devices (55 % APNs, 45 % FCM) of the reach rows: a broadcast timed from its publish to every push accepted by the local APNs and FCM servers (0: none)."
    )
    var reachPopulation: Int = 1_000_000
    @Option(help: "Sender worker processes of each reach row, comma-separated (one broadcast each).") var reachSenders = "1,2"
    @Option(help: "Seconds the idle row's worker and API run with nothing to do before their CPU is measured.")
    var idleWarmupSeconds: Int = 60
    @Option(help: "Seconds over which the idle row measures the CPU of the worker, the API, the broker and Redis.")
    var idleSeconds: Int = 60
    @Option(help: "How registrations are seeded: lua (the indexer's apply script) or bulk (checked identical first).")
    var seedPath: BenchmarkOptions.SeedPath = .bulk
    @Option(help: "Threads seeding Redis in parallel.") var seedThreads: Int = 2
    @Option(help: "One-recipient events per second in the latency runs.") var latencyRate: Int = 20
    @Option(help: "Seconds each latency run lasts (at most).") var latencySeconds: Int = 10
    @Option(help: "Tag expression of the narrower wide event.") var expression: String = "(World || Politics) && !Sports"
    @Option(help: "More tag expressions measured after it, separated by ';' (empty: none).")
    var extraExpressions: String = "World;World && Politics;World && Politics && Technology;Region_Nordic && !Sports"
    @Option(
        help:
            "Narrow events (each three of the six categories, about 1.7 % of the devices) published together and timed as one row; 0: none."
    )
    var burst: Int = 20
    @Option(help: "One tag expression for every event of the burst, instead of the category triples.") var burstExpression: String?
    @Option(help: "Directory the JSON results are written to.") var results: String = "bench/results"
    @Option(help: "Executable spawned as `<it> worker` (default: the herald next to this executable).") var workerExecutable: String?
    @Option(
        help:
            "What stops a fan-out's clock: committed (the status reader saw every task's commit; deliveries counted afterwards) or seen (the reader saw the last delivery)."
    )
    var clock: BenchmarkOptions.Clock = .committed

    @Flag(help: "Skip the pipeline phases (broadcast, latency, memory).") var skipBroadcast = false
    @Flag(help: "Skip the latency runs.") var skipLatency = false
    @Flag(help: "Skip stopping a broadcast in flight.") var skipStop = false
    @Flag(help: "Skip rehearsing a broadcast (dryRun).") var skipRehearsal = false
    @Option(help: "The breaking event's audience during a bulk broadcast (empty: skip that row).")
    var preemptionExpression = "World && Politics"
    @Option(
        help:
            "Registrations of a second hub whose breaking alert is timed alone and while the main hub broadcasts or is flooded (0: skip those rows)."
    )
    var isolationAudience = 100_000
    @Option(help: "Pairs (the alert alone, then under the load) per load of the hub isolation rows, 1 to 9.") var isolationPairs = 3
    @Option(
        help: "At most this many registrations flooded into a third hub while the second hub's breaking alert fans out (0: skip that row)."
    )
    var isolationFlood = 300_000
    @Flag(help: "Skip the memory populations other than the main one.") var skipMemory = false
    @Flag(help: "Skip the broker ceiling.") var skipCeiling = false
    @Flag(help: "Skip the micro-benchmarks.") var skipMicro = false
    @Flag(help: "Skip the idle row (a worker with its default roles and the API with nothing to do, measured last).")
    var skipIdle = false
    @Flag(help: "Run only the micro-benchmarks (no broker or Redis needed).") var microOnly = false
    @Flag(help: "Also time `herald reindex` of the main population.") var reindex = false
    @Flag(help: "Each round also runs the expression (--expression) after its broadcast, between ceilings of its own.")
    var roundExpressions = false
    @Flag(
        help:
            "Rounds run only the expression (--expression), each between ceilings of its own, without broadcasts: for a population whose round broadcasts the embedded broker could not hold in memory (ten million)."
    )
    var roundExpressionsOnly = false
    @Flag(help: "Keep the run's topics, Redis keys and worker logs.") var keepData = false

    func validate() throws {
        guard registrations >= 1_000 else { throw ValidationError("--registrations must be at least 1000") }
        guard workers >= 1, workers <= 16 else { throw ValidationError("--workers must be 1 to 16") }
        guard partitions >= 1 else { throw ValidationError("--partitions must be at least 1") }
        guard (0...20).contains(sizedCeilings) else { throw ValidationError("--sized-ceilings must be 0 to 20") }
        guard (1...9).contains(capPairs) else {
            throw ValidationError("--cap-pairs must be 1 to 9 (the capped hub allows 10 alerts a day)")
        }
        guard (1...9).contains(isolationPairs) else { throw ValidationError("--isolation-pairs must be 1 to 9") }
        guard isolationAudience >= 0, isolationFlood >= 0 else {
            throw ValidationError("--isolation-audience and --isolation-flood must be 0 or more")
        }
        guard (0...20).contains(rounds) else { throw ValidationError("--rounds must be 0 to 20") }
        guard !(roundExpressions || roundExpressionsOnly) || rounds > 0 else {
            throw ValidationError("--round-expressions and --round-expressions-only need --rounds of 1 or more")
        }
        guard latencyRate >= 1, latencySeconds >= 1 else { throw ValidationError("--latency-rate and --latency-seconds must be positive") }
        guard parsedTemplateVariants != nil, templatePopulation >= 1_000 else {
            throw ValidationError(
                "--template-variants must be comma-separated counts of 1 or more, and --template-population at least 1000")
        }
        guard parsedMemorySizes != nil else { throw ValidationError("--memory-sizes must be comma-separated counts of at least 1000") }
        guard (0...200).contains(burst) else { throw ValidationError("--burst must be 0 to 200") }
        guard senderDeliveries >= 0, webPushDeliveries >= 0 else {
            throw ValidationError("--sender-deliveries and --web-push-deliveries must be 0 or more")
        }
        guard reachPopulation == 0 || reachPopulation >= 1_000, parsedReachSenders != nil else {
            throw ValidationError("--reach-population must be 0 or at least 1000, and --reach-senders comma-separated counts of 1 to 8")
        }
        guard schedules >= 0, (5...3_600).contains(scheduleLead) else {
            throw ValidationError("--schedules must be 0 or more and --schedule-lead 5 to 3600 seconds")
        }
        guard (0...3_600).contains(idleWarmupSeconds), (1...3_600).contains(idleSeconds) else {
            throw ValidationError("--idle-warmup-seconds must be 0 to 3600 and --idle-seconds 1 to 3600")
        }
        guard redisCluster == 0 || redisCluster >= 3 else { throw ValidationError("--redis-cluster must be 0 or at least 3 masters") }
        if redisCluster > 0 && !FileManager.default.isExecutableFile(atPath: Self.clusterScript) {
            throw ValidationError("--redis-cluster needs \(Self.clusterScript) (run from the repository root, or pass --redis-cluster 0)")
        }
    }

    private var parsedMemorySizes: [Int]? {
        let sizes = memorySizes.split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces)) }
        guard !sizes.isEmpty, sizes.allSatisfy({ ($0 ?? 0) >= 1_000 }) else { return nil }
        return sizes.compactMap { $0 }
    }

    private var parsedReachSenders: [Int]? {
        let counts = reachSenders.split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces)) }
        guard !counts.isEmpty, counts.allSatisfy({ (1...8).contains($0 ?? 0) }) else { return nil }
        return counts.compactMap { $0 }
    }

    private var parsedTemplateVariants: [Int]? {
        let variants = templateVariants.split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces)) }
        guard variants.allSatisfy({ ($0 ?? 0) >= 1 }) else { return nil }
        return variants.compactMap { $0 }
    }

    func run() async throws {
        var options = BenchmarkOptions()
        options.registrations = registrations
        options.workers = workers
        options.partitions = partitions
        options.memorySizes = parsedMemorySizes ?? []
        options.templateVariants = microOnly ? [] : parsedTemplateVariants ?? []
        options.templatePopulation = templatePopulation
        options.capPopulation = microOnly ? 0 : capPopulation
        options.capPairs = capPairs
        options.ceilingRecords = ceilingRecords
        options.rounds = rounds
        options.sizedCeilingRuns = sizedCeilings
        options.roundExpressions = roundExpressions || roundExpressionsOnly
        options.roundBroadcasts = !roundExpressionsOnly
        options.redisClusterMasters = redisCluster
        options.schedules = microOnly ? 0 : schedules
        options.scheduleLeadSeconds = scheduleLead
        options.senderDeliveries = microOnly ? 0 : senderDeliveries
        options.webPushDeliveries = microOnly ? 0 : webPushDeliveries
        options.reachPopulation = microOnly ? 0 : reachPopulation
        options.reachSenders = parsedReachSenders ?? []
        options.seedPath = seedPath
        options.seedThreads = seedThreads
        options.latencyRate = latencyRate
        options.latencySeconds = latencySeconds
        options.expression = expression
        options.extraExpressions = extraExpressions.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }.filter {
            !$0.isEmpty
        }
        options.burstEvents = burst
        options.burstExpression = burstExpression
        options.keepData = keepData
        options.clock = clock
        options.runReindex = reindex
        options.runStop = !skipStop
        options.runRehearsal = !skipRehearsal
        options.preemptionExpression = preemptionExpression
        options.isolationAudience = isolationAudience
        options.isolationFlood = isolationFlood
        options.isolationPairs = isolationPairs
        options.runMicro = !skipMicro
        options.runCeiling = !skipCeiling && !microOnly
        options.runBroadcast = !skipBroadcast && !microOnly
        options.runLatency = !skipLatency && !skipBroadcast && !microOnly
        options.runMemory = !skipMemory && !skipBroadcast && !microOnly
        options.runIdle = !skipIdle && !microOnly
        options.idleWarmupSeconds = idleWarmupSeconds
        options.idleSeconds = idleSeconds

        // Tansu delays a group join by about half the session timeout: keep it short unless set.
        let base = settings.settings(defaults: [.sessionTimeoutMs: "6000"])
        // The same malloc as the workers it spawns (they get HERALD_ALLOCATOR from `base`), so
        // the ceiling's producers and the lanes' producers run on the same allocator settings.
        try base.applyAllocator(environment: ProcessInfo.processInfo.environment)
        let partitionCount = String(partitions)
        // The express partitions come on top, so each bulk lane has deliveries partitions of its own.
        let deliveryPartitionCount = String(partitions + PipelineConfiguration().expressDeliveryPartitions)
        @Sendable func phaseSettings(_ names: BenchmarkNames) -> HeraldSettings {
            var flags: [Setting.Key: String] = [:]
            for setting in Setting.all { flags[setting.key] = base[setting.key] }
            flags[.topicPrefix] = names.topicPrefix
            flags[.redisPrefix] = names.redisPrefix
            if let url = names.redisURL { flags[.redisUrl] = url }
            flags[.taskPartitions] = partitionCount
            flags[.deliveryPartitions] = deliveryPartitionCount
            return HeraldSettings(flags: flags, environment: [:], endpointsFile: nil)
        }
        // What a deployment that sets nothing runs: no flags, no environment, no stack file.
        let production = HeraldSettings(flags: [:], environment: [:], endpointsFile: nil)
        let productionDefaults = BenchmarkProductionDefaults(
            roles: production[.roles], plannerFetchWaitMs: try production.plannerFetchWaitMs(),
            taskFetchWaitMs: try production.taskFetchWaitMs())
        let executable = workerExecutable ?? Self.heraldExecutable()
        var logger = Logger(label: "herald.bench")
        // Quiet unless asked (progress has its own lines); HERALD_LOG_LEVEL=info also shows the
        // bench's own clients' librdkafka statistics when `statistics.interval.ms` is set.
        logger.logLevel = ProcessInfo.processInfo.environment["HERALD_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .warning
        let runId = BenchmarkRunner.newRunId()
        let workDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-\(runId)")
        try FileManager.default.createDirectory(at: workDirectory, withIntermediateDirectories: true)

        let environment = BenchmarkEnvironment(
            configuration: { names in try phaseSettings(names).pipelineConfiguration() },
            workerLaunch: { spec in
                let phase = phaseSettings(spec.names)
                var variables: [String: String] = [:]
                for setting in Setting.all { variables[setting.environment] = phase[setting.key] }
                let roles = spec.roles
                for (key, value) in [(Setting.Key.instanceId, spec.instanceId), (.metricsPort, "0"), (.roles, roles)] {
                    variables[Setting(key).environment] = value
                }
                variables.merge(spec.environment) { $1 }
                let arguments = spec.command == .api ? ["api"] : ["worker", "--roles", roles]
                return WorkerLaunch(executable: executable, arguments: arguments, environment: variables)
            },
            resultsDirectory: URL(fileURLWithPath: results), workDirectory: workDirectory, logger: logger,
            startRedisCluster: { masters in
                try Self.startRedisCluster(masters: masters, directory: workDirectory.appendingPathComponent("redis-cluster"))
            },
            productionDefaults: productionDefaults
        )
        let (report, url) = try await BenchmarkRunner(options: options, environment: environment, runId: runId).run()
        print(report.table)
        print("results: \(url.path)")
        if keepData {
            print("worker logs: \(workDirectory.path)")
        } else {
            try? FileManager.default.removeItem(at: workDirectory)
        }
    }

    static let clusterScript = "scripts/redis-cluster"

    /// `scripts/redis-cluster start`: the cluster's URL and its nodes' process ids, and a
    /// `stop` that removes it.
    static func startRedisCluster(masters: Int, directory: URL) throws -> BenchmarkRedisCluster {
        let script = URL(fileURLWithPath: clusterScript).path
        let output = try runTool(script, ["start", directory.path, String(masters)])
        guard let url = output.split(separator: "\n").last.map(String.init), url.hasPrefix("redis+cluster://") else {
            throw BenchmarkError("\(clusterScript) start printed no cluster URL: \(output.suffix(400))", code: "redis_cluster")
        }
        let ports = try String(contentsOf: directory.appendingPathComponent("ports"), encoding: .utf8).split(separator: "\n")
        let pids = ports.compactMap { port in
            (try? String(contentsOf: directory.appendingPathComponent("\(port)/redis.pid"), encoding: .utf8))
                .flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
        return BenchmarkRedisCluster(url: url, pids: pids) { _ = try? runTool(script, ["stop", directory.path]) }
    }

    /// Runs a tool to completion and returns its output. The output goes through a file, not a
    /// pipe: the daemonized redis-servers inherit the descriptor and would hold a pipe open.
    static func runTool(_ path: String, _ arguments: [String]) throws -> String {
        let outputFile = FileManager.default.temporaryDirectory.appendingPathComponent("herald-bench-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: outputFile.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: outputFile) }
        let output = try FileHandle(forWritingTo: outputFile)
        defer { try? output.close() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.standardOutput = output
        process.standardError = output
        try process.run()
        process.waitUntilExit()
        let text = (try? String(contentsOf: outputFile, encoding: .utf8)) ?? ""
        guard process.terminationStatus == 0 else {
            throw BenchmarkError("\(path) \(arguments.joined(separator: " ")) failed: \(text.suffix(800))", code: "redis_cluster")
        }
        return text
    }

    /// The `herald` built next to this executable, so workers run the code of the same build.
    static func heraldExecutable() -> String {
        let own = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: own).deletingLastPathComponent().appendingPathComponent("herald").path
    }
}

extension BenchmarkOptions.SeedPath: ExpressibleByArgument {}
extension BenchmarkOptions.Clock: ExpressibleByArgument {}
