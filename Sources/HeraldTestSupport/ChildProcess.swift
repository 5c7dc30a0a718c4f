import Foundation

/// A server process started for a test and terminated when the test is done (or when this
/// value is deinitialised, so a failing test does not leak servers).
public final class ChildProcess: @unchecked Sendable {
    public let name: String
    private let process: Process
    private let lock = NSLock()

    /// Starts `executable` with `arguments`; stdout and stderr go to `logFile`.
    public init(name: String, executable: String, arguments: [String], logFile: URL) throws {
        self.name = name
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        let log = try FileHandle(forWritingTo: logFile)
        process.standardOutput = log
        process.standardError = log
        try withTerminationSignalsUnblocked { try process.run() }
    }

    public var processIdentifier: Int32 { process.processIdentifier }
    public var isRunning: Bool {
        lock.lock()
        defer { lock.unlock() }
        return !reaped && process.isRunning
    }

    /// Sends SIGTERM (or `signal`) and waits for the process to exit.
    ///
    /// Foundation learns of a child's exit from a SIGCHLD source, and with many children
    /// starting and ending at once it can miss one: the child stays a zombie, `isRunning` stays
    /// true, and `waitUntilExit` spins on the test's thread for ever (a whole suite stalled so).
    /// So this polls, and after a second without news reaps the child itself.
    public func stop(signal: Int32 = SIGTERM) {
        lock.lock()
        defer { lock.unlock() }
        guard !reaped, process.isRunning else { return }
        let pid = process.processIdentifier
        kill(pid, signal)
        let unnoticed = Date().addingTimeInterval(1)
        while process.isRunning {
            if Date() > unnoticed {
                var status: Int32 = 0
                let result = waitpid(pid, &status, WNOHANG)
                if result == pid || (result == -1 && errno == ECHILD) {
                    reaped = true
                    return
                }
            }
            usleep(5_000)
        }
    }

    /// True once `stop` reaped the child itself.
    private var reaped = false

    deinit { stop(signal: SIGKILL) }
}

/// Polls `condition` every 20 ms until it holds or `timeout` seconds pass.
public func waitUntil(timeout: Double, _ what: String, _ condition: () -> Bool) throws {
    let deadline = Date().addingTimeInterval(timeout)
    while !condition() {
        if Date() > deadline { throw TestServerError(message: "timed out after \(timeout)s waiting for \(what)") }
        usleep(20_000)
    }
}

public struct TestServerError: Error, CustomStringConvertible {
    public var message: String
    public init(message: String) { self.message = message }
    public var description: String { message }
}

/// Runs `body` (which starts a child process) with SIGTERM and SIGINT unblocked on the calling
/// thread. A child inherits the signal mask of the thread that spawns it, and the threads
/// Swift's concurrency runtime runs tests on block those signals, so a server started from a
/// test would otherwise ignore SIGTERM and never shut down gracefully.
public func withTerminationSignalsUnblocked<T>(_ body: () throws -> T) rethrows -> T {
    var unblock = sigset_t()
    sigemptyset(&unblock)
    sigaddset(&unblock, SIGTERM)
    sigaddset(&unblock, SIGINT)
    var previous = sigset_t()
    pthread_sigmask(SIG_UNBLOCK, &unblock, &previous)
    defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
    return try body()
}

/// Where the servers and scratch folders used by tests live.
public enum ToolPaths {
    /// The repository root, found from this file's location (tests run from any directory).
    public static let repositoryRoot: URL = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }  // Sources/HeraldTestSupport/ChildProcess.swift
        return url
    }()

    /// The Tansu broker installed by scripts/bootstrap, or HERALD_TANSU.
    public static var tansu: String {
        ProcessInfo.processInfo.environment["HERALD_TANSU"]
            ?? repositoryRoot.appendingPathComponent(".herald/bin/tansu").path
    }

    /// redis-server from PATH (or HERALD_REDIS_SERVER).
    public static var redisServer: String {
        if let path = ProcessInfo.processInfo.environment["HERALD_REDIS_SERVER"] { return path }
        for dir in ["/usr/bin", "/usr/local/bin", "/opt/homebrew/bin"] {
            let candidate = dir + "/redis-server"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return "redis-server"
    }

    /// A fresh scratch folder under .herald/test-runs for one server's data and log.
    public static func scratchDirectory(_ name: String) throws -> URL {
        let url = repositoryRoot.appendingPathComponent(".herald/test-runs/\(name)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
