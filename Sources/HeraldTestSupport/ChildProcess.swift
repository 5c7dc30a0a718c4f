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
        FileManager.default.createFile(atPath: logFile.path, contents: nil)
        let log = try FileHandle(forWritingTo: logFile)
        process.standardOutput = log
        process.standardError = log
        try process.run()
    }

    public var processIdentifier: Int32 { process.processIdentifier }
    public var isRunning: Bool { process.isRunning }

    /// Sends SIGTERM (or `signal`) and waits for the process to exit.
    public func stop(signal: Int32 = SIGTERM) {
        lock.lock()
        defer { lock.unlock() }
        guard process.isRunning else { return }
        kill(process.processIdentifier, signal)
        process.waitUntilExit()
    }

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
