import Foundation
import HeraldPipeline
import HeraldStreams
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// The idle row: what Herald costs with nothing to do.
///
/// One `herald worker` with its default roles and one `herald api` run on topics and a Redis
/// prefix of their own, with Herald's production fetch waits (`BenchmarkProductionDefaults`)
/// rather than the run's: the embedded stack shortens them for its broker, and a waiting
/// fetch is most of what an idle worker does. After a warm-up with nothing to do, the CPU
/// time (`utime + stime` of `/proc/<pid>/stat`) of the worker, the API, the broker and Redis
/// is read before and after the measured seconds, each reported as a share of one core
/// (bench/probes/idle-cost.sh measures the same by hand).
struct IdlePhase {
    let names: BenchmarkNames
    let configuration: PipelineConfiguration
    let options: BenchmarkOptions
    let environment: BenchmarkEnvironment
    let defaults: BenchmarkProductionDefaults
    /// The run's broker and Redis servers, when they run on this machine.
    let brokerPID: Int32?
    let redisPIDs: [Int32]

    /// The API's shared-access policy and registration-id secret: long enough for its checks
    /// (the values of bench/probes/idle-cost.sh), and used by no request.
    static let policies = "Full:listen+send+manage:full-key-for-the-idle-cost-probe-00001"
    static let idSecret = "id-secret-for-the-idle-cost-probe-000001"

    private var logger: Logger { environment.logger }

    /// The registrations topic, which the worker's indexer and the API create for themselves.
    private var registrationsTopic: String { names.topicPrefix + "registrations" }

    func run() async throws -> BenchmarkReport.Idle {
        Console.say(
            "== idle Herald: a worker (\(defaults.roles)) and the API with nothing to do, production fetch waits (planner \(defaults.plannerFetchWaitMs) ms, task lanes \(defaults.taskFetchWaitMs) ms), topics \(names.topicPrefix)*"
        )
        var processes: [WorkerProcess] = []
        func cleanUp() async {
            for process in processes { await process.stop() }
            await PhaseData.remove(
                names: names, configuration: configuration, options: options, logger: logger, extraTopics: [registrationsTopic])
        }
        do {
            try await TopicProvisioner(
                topics: configuration.topics, bootstrapServers: configuration.bootstrapServers, extra: configuration.kafkaExtra,
                logger: logger
            ).provision()
            let workerSpec = WorkerSpec(
                names: names, index: 0, roles: defaults.roles, environment: try settings(metricsPort: Self.freeLocalPort()))
            let worker = try WorkerProcess(
                launch: environment.workerLaunch(workerSpec), spec: workerSpec, logDirectory: environment.workDirectory)
            processes.append(worker)
            let apiPort = try Self.freeLocalPort()
            var apiSettings = try settings(metricsPort: Self.freeLocalPort())
            apiSettings["HERALD_API_PORT"] = String(apiPort)
            let apiSpec = WorkerSpec(names: names, index: 0, roles: defaults.roles, environment: apiSettings, command: .api)
            let api = try WorkerProcess(launch: environment.workerLaunch(apiSpec), spec: apiSpec, logDirectory: environment.workDirectory)
            processes.append(api)
            Console.say(
                "  started the worker (pid \(worker.pid)) and the API (pid \(api.pid), port \(apiPort)); \(options.idleWarmupSeconds) s of warm-up"
            )

            let warmupStarted = ContinuousClock.now
            try await idle(for: options.idleWarmupSeconds, processes)
            // Listening by now after any warm-up of a few seconds; a short one waits for it here.
            let listening = ContinuousClock.now + .seconds(30)
            while !Self.isAcceptingConnections(port: apiPort) {
                guard ContinuousClock.now < listening else {
                    throw BenchmarkError(
                        "the API accepted no connection on 127.0.0.1:\(apiPort) after the warm-up; its log: \(api.logFile.path)",
                        code: "idle_api")
                }
                try check(processes)
                try await Task.sleep(for: .milliseconds(200))
            }
            // A log rewrite after the previous phases' cleanup would count as Redis's idle cost.
            if try await RedisBackgroundWork.waitUntilIdle(configuration.redis) == nil {
                Console.say("  Redis was still rewriting its log after 180 s; measuring anyway")
            }
            let meter = CPUMeter(brokerPID: brokerPID, redisPIDs: redisPIDs)
            let waited = await meter.waitForQuiet(workers: processes)
            let warmup = (ContinuousClock.now - warmupStarted).seconds

            let before = meter.snapshot(workers: processes)
            let workerBefore = worker.cpuSeconds
            let apiBefore = api.cpuSeconds
            try await idle(for: options.idleSeconds, processes)
            let workerAfter = worker.cpuSeconds
            let apiAfter = api.cpuSeconds
            var cpu = meter.account(before, meter.snapshot(workers: processes))
            cpu.quietWaitSeconds = waited
            guard let workerBefore, let workerAfter, let apiBefore, let apiAfter else {
                throw BenchmarkError("cannot read the worker's and the API's CPU time from /proc", code: "idle_cpu")
            }
            let result = BenchmarkReport.Idle(
                workerRoles: defaults.roles, plannerFetchWaitMs: defaults.plannerFetchWaitMs, taskFetchWaitMs: defaults.taskFetchWaitMs,
                warmupSeconds: warmup, workerCPUSeconds: workerAfter - workerBefore, apiCPUSeconds: apiAfter - apiBefore, cpu: cpu)
            func percent(_ value: Double?) -> String { value.map { Console.fixed($0, 2) + " %" } ?? "?" }
            Console.say(
                "  over \(Console.fixed(cpu.wallSeconds, 0)) s: worker \(percent(result.workerPercentOfCore)), API \(percent(result.apiPercentOfCore)) of a core, together \(percent(result.heraldPercentOfCore)); broker \(percent(result.brokerPercentOfCore)), Redis \(percent(result.redisPercentOfCore))"
            )
            await cleanUp()
            return result
        } catch {
            for process in processes where !process.isRunning {
                Console.say(
                    "\(process.spec.command.rawValue) \(process.spec.instanceId) exited; last log lines (\(process.logFile.path)):\n\(process.logTail())"
                )
            }
            await cleanUp()
            throw error
        }
    }

    /// What both processes get on top of the run's settings: Herald's production fetch waits
    /// (the run's may be the embedded stack's), the API's credentials, a metrics port of their own.
    private func settings(metricsPort: Int) -> [String: String] {
        [
            "HERALD_PLANNER_FETCH_WAIT_MS": String(defaults.plannerFetchWaitMs),
            "HERALD_TASK_FETCH_WAIT_MS": String(defaults.taskFetchWaitMs),
            "HERALD_POLICIES": Self.policies,
            "HERALD_ID_SECRET": Self.idSecret,
            "HERALD_METRICS_PORT": String(metricsPort),
            "HERALD_LOG_LEVEL": "notice",
        ]
    }

    /// Sleeps `seconds`, checking every second that both processes still run.
    private func idle(for seconds: Int, _ processes: [WorkerProcess]) async throws {
        let end = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < end {
            try check(processes)
            try await Task.sleep(for: min(Duration.seconds(1), end - ContinuousClock.now))
        }
        try check(processes)
    }

    private func check(_ processes: [WorkerProcess]) throws {
        if let dead = processes.first(where: { !$0.isRunning }) {
            throw BenchmarkError(
                "\(dead.spec.command.rawValue) \(dead.spec.instanceId) exited while idle; its log: \(dead.logFile.path)",
                code: "idle_exited")
        }
    }

    /// A TCP port on 127.0.0.1 that is free now (bound to port 0, then released): the process
    /// that gets it binds it a moment later.
    static func freeLocalPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BenchmarkError("socket() failed: errno \(errno)", code: "free_port") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard bound == 0, named == 0 else { throw BenchmarkError("binding 127.0.0.1:0 failed: errno \(errno)", code: "free_port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// True when something accepts TCP connections on 127.0.0.1:`port`.
    static func isAcceptingConnections(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}
