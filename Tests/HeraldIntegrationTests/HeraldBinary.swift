import Foundation
import HeraldAPI
import HeraldApp
import HeraldDomain
import HeraldPipeline
import HeraldRedis
import HeraldRegistry
import HeraldTestSupport

/// The `herald` executable built next to the tests (`swift build --build-tests` builds it),
/// run as a separate process the way operators run it.
enum HeraldBinary {
    static var path: String {
        if let path = ProcessInfo.processInfo.environment["HERALD_BINARY"] { return path }
        return ToolPaths.repositoryRoot.appendingPathComponent(".build/debug/herald").path
    }

    static var isBuilt: Bool { FileManager.default.isExecutableFile(atPath: path) }

    /// `herald-local` (the demo and the local push servers), built next to `herald`.
    static var localPath: String {
        if let path = ProcessInfo.processInfo.environment["HERALD_LOCAL_BINARY"] { return path }
        return URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent("herald-local").path
    }

    static var isLocalBuilt: Bool { FileManager.default.isExecutableFile(atPath: localPath) }

    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs `herald args...` to completion (killed after `timeout` seconds) in a scratch
    /// directory, so no `.herald/run/endpoints.env` of a developer's stack leaks in.
    static func run(_ arguments: [String], environment: [String: String] = [:], timeout: Double = 120, executable: String = path)
        throws -> Output
    {
        let process = try start(arguments, environment: environment, executable: executable)
        let deadline = Date().addingTimeInterval(timeout)
        while process.process.isRunning && Date() < deadline { usleep(50_000) }
        if process.process.isRunning { process.process.terminate() }
        process.process.waitUntilExit()
        return Output(status: process.process.terminationStatus, stdout: process.stdout(), stderr: process.stderr())
    }

    /// A running `herald` process whose output goes to files in a scratch directory.
    final class Running: @unchecked Sendable {
        let process = Process()
        let directory: URL

        init(directory: URL) { self.directory = directory }

        func stdout() -> String { (try? String(contentsOf: directory.appendingPathComponent("stdout"), encoding: .utf8)) ?? "" }
        func stderr() -> String { (try? String(contentsOf: directory.appendingPathComponent("stderr"), encoding: .utf8)) ?? "" }

        /// The head of a crash report in stderr (what trapped, and the crashed thread's first
        /// frames), which a tail of a long report cuts off; empty when the process did not crash.
        func crashHead(lines: Int = 30) -> String {
            let all = stderr().split(separator: "\n", omittingEmptySubsequences: false)
            guard let start = all.firstIndex(where: { $0.contains("Fatal error") || $0.contains("Program crashed") }) else { return "" }
            var head = Array(all[start..<min(all.count, start + 8)])
            if let crashed = all[(start + 1)...].firstIndex(where: { $0.hasPrefix("Thread") && $0.hasSuffix(" crashed:") }) {
                head += all[crashed..<min(all.count, crashed + lines)]
            }
            return head.joined(separator: "\n")
        }

        func signal(_ signal: Int32) { kill(process.processIdentifier, signal) }

        /// Lets the process run in short slices, stopped (SIGSTOP) between them while `done`
        /// looks at what it did; returns with the process stopped once `done` says so. What
        /// `done` saw holds until the process is resumed, so a kill that follows lands right
        /// there, however fast the machine. The slice is slept on this thread, with no suspension
        /// point between SIGCONT and SIGSTOP: an awaited sleep could wake late, by seconds when
        /// other tests hold the cooperative pool, and let the process run to the end meanwhile.
        func runInSlices(
            of slice: Duration = .milliseconds(30), timeout: Duration, until done: () async throws -> Bool
        ) async throws {
            let deadline = ContinuousClock.now + timeout
            while true {
                guard ContinuousClock.now < deadline else {
                    throw TestServerError(message: "not done after \(timeout):\n\(stderr().suffix(2_000))")
                }
                signal(SIGCONT)
                usleep(useconds_t(slice.wholeNanoseconds / 1_000))
                signal(SIGSTOP)
                if try await done() { return }
            }
        }

        func waitForExit(timeout: Double) -> Bool {
            let deadline = Date().addingTimeInterval(timeout)
            while process.isRunning && Date() < deadline { usleep(50_000) }
            return !process.isRunning
        }

        /// `waitForExit` without holding a thread: a child that needs this process's own servers
        /// (the local push services answer on the cooperative pool) must not wait on a thread
        /// of that pool, which has as many threads as the machine has cores.
        func exited(within timeout: Double) async -> Bool {
            let deadline = Date().addingTimeInterval(timeout)
            while process.isRunning && Date() < deadline { try? await Task.sleep(for: .milliseconds(50)) }
            return !process.isRunning
        }

        deinit {
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
            // A crash report is kept whole (a failure message shows only its head and tail).
            if !crashHead().isEmpty {
                let kept = ToolPaths.repositoryRoot.appendingPathComponent(".herald/test-runs/crash-\(process.processIdentifier).log")
                try? FileManager.default.createDirectory(at: kept.deletingLastPathComponent(), withIntermediateDirectories: true)
                try? FileManager.default.removeItem(at: kept)
                try? FileManager.default.copyItem(at: directory.appendingPathComponent("stderr"), to: kept)
            }
            try? FileManager.default.removeItem(at: directory)
        }
    }

    static func start(
        _ arguments: [String], environment: [String: String] = [:], executable: String = path, input: FileHandle? = nil
    ) throws -> Running {
        let directory = try ToolPaths.scratchDirectory("herald-cli")
        let running = Running(directory: directory)
        running.process.executableURL = URL(fileURLWithPath: executable)
        running.process.arguments = arguments
        running.process.currentDirectoryURL = directory
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("HERALD_") || $0.key.hasPrefix("HERALD_TEST_") }
        // Every test broker is Tansu, whose groups never form again after a leader leaves
        // mid-rebalance (docs/architecture.md, "Broker notes").
        env["HERALD_LEAVE_GROUP_ON_CLOSE"] = "false"
        // Tansu answers an idle fetch only when its wait ends: the embedded stack's short waits.
        env["HERALD_PLANNER_FETCH_WAIT_MS"] = String(PipelineConfiguration.EmbeddedBrokerWaits.plannerMs)
        env["HERALD_TASK_FETCH_WAIT_MS"] = String(PipelineConfiguration.EmbeddedBrokerWaits.tasksMs)
        env.merge(environment) { $1 }
        running.process.environment = env
        let out = directory.appendingPathComponent("stdout")
        let err = directory.appendingPathComponent("stderr")
        for file in [out, err] where !FileManager.default.createFile(atPath: file.path, contents: nil) {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: file.path])
        }
        running.process.standardOutput = try FileHandle(forWritingTo: out)
        running.process.standardError = try FileHandle(forWritingTo: err)
        if let input { running.process.standardInput = input }
        try withTerminationSignalsUnblocked { try running.process.run() }
        return running
    }
}

/// `count` template registrations tagged World (ids `<idPrefix>0`...), written straight into the
/// index: the audience of the fault tests' broadcasts.
func seedBroadcastAudience(_ index: RegistrationIndex, count: Int, idPrefix: String) async throws {
    try await index.markBuilt()
    let template = RegistrationTemplate(name: "news", body: #"{"aps":{"alert":"$(News_English)"}}"#)
    for chunk in stride(from: 0, to: count, by: 2_000) {
        let batch = (chunk..<min(chunk + 2_000, count)).map {
            Registration(
                registrationId: "\(idPrefix)\($0)", platform: .apns, handle: String(repeating: "ab", count: 32), tags: ["World"],
                template: template, version: 1)
        }
        _ = try await index.apply(batch.map { .registration(IndexedRegistration($0)) })
    }
}

extension HeraldHTTPClient {
    /// A client of the API at `base` signing as a shared-access `policy` for ten minutes.
    static func signed(_ base: URL, _ policy: (name: String, key: String)) -> HeraldHTTPClient {
        HeraldHTTPClient(
            baseURL: base,
            authorization: SharedAccessSignature.token(
                resource: base.absoluteString, policy: policy.name, key: policy.key, expiry: Date().addingTimeInterval(600)))
    }

    /// Waits until `/health/ready` answers 200; throws with `log()` after `attempts` tries 100 ms apart.
    func waitUntilReady(attempts: Int = 300, log: () -> String) async throws {
        for _ in 0..<attempts {
            if let reply = try? await send("GET", "/health/ready"), reply.status == 200 { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw TestServerError(message: "herald api did not become ready:\n\(log())")
    }
}
