import Foundation

/// One spawned worker process (or the idle row's `herald api`), measured from the outside (peak
/// RSS, CPU time), so the figures belong to the worker alone and not to the benchmark driving it.
final class WorkerProcess: @unchecked Sendable {
    let spec: WorkerSpec
    let logFile: URL
    private let process: Process

    init(launch: WorkerLaunch, spec: WorkerSpec, logDirectory: URL) throws {
        self.spec = spec
        logFile = logDirectory.appendingPathComponent("\(spec.command.rawValue)-\(spec.instanceId).log")
        guard FileManager.default.createFile(atPath: logFile.path, contents: nil) else {
            throw BenchmarkError("cannot create the worker log \(logFile.path)", code: "worker_log")
        }
        let log = try FileHandle(forWritingTo: logFile)
        process = Process()
        process.executableURL = URL(fileURLWithPath: launch.executable)
        process.arguments = launch.arguments
        process.environment = ProcessInfo.processInfo.environment.merging(launch.environment) { _, override in override }
        process.standardOutput = log
        process.standardError = log
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    var pid: Int32 { process.processIdentifier }

    /// Read from `/proc` rather than `Process.isRunning`, so a killed or exited worker is seen
    /// even before Foundation has reaped it (a zombie counts as exited).
    var isRunning: Bool {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return false }
        return text[text.index(after: close)...].split(separator: " ").first != "Z"
    }

    /// Peak resident set size since the process started (`VmHWM`).
    var peakRSSBytes: Int? { ProcessProbe.statusBytes(pid: pid, field: "VmHWM") }
    var rssBytes: Int? { ProcessProbe.statusBytes(pid: pid, field: "VmRSS") }
    var cpuSeconds: Double? { ProcessProbe.cpuSeconds(pid: pid) }

    /// SIGSTOP: the process and all its threads stand still (no CPU, no fetches, no
    /// heartbeats) until `resume()`. Keep it short: the worker's groups evict a member that
    /// sends no heartbeat for a session timeout.
    func suspend() {
        if isRunning { kill(pid, SIGSTOP) }
    }

    /// SIGCONT after `suspend()`.
    func resume() {
        kill(pid, SIGCONT)
    }

    /// SIGTERM (graceful: the worker commits and leaves its groups), then SIGKILL after `grace`.
    func stop(grace: Duration = .seconds(15)) async {
        guard isRunning else { return }
        kill(pid, SIGTERM)
        let deadline = ContinuousClock.now + grace
        while isRunning && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(50))
        }
        if isRunning { kill(pid, SIGKILL) }
        let killed = ContinuousClock.now + .seconds(5)
        while isRunning && ContinuousClock.now < killed { try? await Task.sleep(for: .milliseconds(20)) }
    }

    /// The last lines the worker logged, for error messages.
    func logTail(lines: Int = 15) -> String {
        let text = (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
        return text.split(separator: "\n", omittingEmptySubsequences: false).suffix(lines).joined(separator: "\n")
    }
}
