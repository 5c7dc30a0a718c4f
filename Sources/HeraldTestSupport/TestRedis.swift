import Foundation

/// A private `redis-server` for one test (or suite), on a free port with its own scratch
/// folder, stopped and cleaned up when this value goes away.
///
/// With `HERALD_TEST_REDIS_URL` set (for example `redis://127.0.0.1:6390`, or a
/// `redis+cluster://` URL to run the suites on a cluster) nothing is started and that server
/// is used instead; tests must then rely on unique key prefixes, and `restart()` throws
/// because someone else owns that process (check `canRestart` first).
public final class TestRedis: @unchecked Sendable {
    /// The server's host and port (a cluster's first seed).
    public let host: String
    public let port: Int
    /// `redis://host:port`, or the external URL as given.
    public var url: String { external ?? "redis://\(host):\(port)" }
    /// True when the external URL is a Redis Cluster.
    public var isCluster: Bool { external?.hasPrefix("redis+cluster://") ?? false }
    private var external: String?
    /// False when the server is external (`HERALD_TEST_REDIS_URL`).
    public var canRestart: Bool { scratch != nil }

    private let scratch: URL?
    private let lock = NSLock()
    private var process: ChildProcess?
    private var generation = 0

    /// Starts a server (or adopts the external one) and waits until it accepts connections.
    public init() throws {
        if let external = ProcessInfo.processInfo.environment["HERALD_TEST_REDIS_URL"], !external.isEmpty {
            (host, port) = try Self.hostAndPort(external)
            self.external = external
            scratch = nil
            return
        }
        host = "127.0.0.1"
        port = freeLocalPort()
        scratch = try ToolPaths.scratchDirectory("redis")
        try start()
    }

    /// Stops the server; the port stays reserved for `restart()`.
    public func stop() {
        lock.lock()
        let running = process
        process = nil
        lock.unlock()
        running?.stop(signal: Self.stopSignal)
        if running != nil {
            // A stopped redis-server may keep the port a moment; wait so a restart can bind it.
            try? waitUntil(timeout: 10, "redis-server on port \(port) to stop") { !isAcceptingConnections(port: port) }
        }
    }

    /// Stops the server and starts a new one on the same port (empty: it saves nothing).
    public func restart() throws {
        guard canRestart else {
            throw TestServerError(message: "cannot restart the external Redis at \(url) (HERALD_TEST_REDIS_URL)")
        }
        stop()
        try start()
    }

    private func start() throws {
        guard let scratch else { return }
        lock.lock()
        generation += 1
        let log = scratch.appendingPathComponent("redis-\(generation).log")
        lock.unlock()
        let child = try ChildProcess(
            name: "redis-server",
            executable: ToolPaths.redisServer,
            arguments: [
                "--port", String(port), "--bind", "127.0.0.1", "--dir", scratch.path,
                "--save", "", "--appendonly", "no", "--daemonize", "no",
            ],
            logFile: log
        )
        lock.lock()
        process = child
        lock.unlock()
        do {
            try waitUntil(timeout: 10, "redis-server to accept connections on port \(port)") {
                guard child.isRunning else { return true }
                return isAcceptingConnections(port: port)
            }
            if !child.isRunning {
                let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
                throw TestServerError(message: "redis-server exited on start (port \(port)): \(output.suffix(500))")
            }
        } catch {
            stop()
            throw error
        }
    }

    /// SIGKILL, not SIGTERM: a child spawned from a libdispatch worker thread inherits that
    /// thread's blocked-signal mask, which includes SIGTERM, so redis-server would never see a
    /// SIGTERM and the wait for it to exit would hang. This server persists nothing, so
    /// killing it loses nothing a graceful shutdown would have kept.
    private static let stopSignal = SIGKILL

    deinit {
        process?.stop(signal: Self.stopSignal)
        if let scratch { try? FileManager.default.removeItem(at: scratch) }
    }

    static func hostAndPort(_ url: String) throws -> (String, Int) {
        let first = url.split(separator: ",")[0]
        guard let components = URLComponents(string: String(first)), ["redis", "redis+cluster"].contains(components.scheme),
            let host = components.host
        else {
            throw TestServerError(message: "HERALD_TEST_REDIS_URL \"\(url)\" is not a redis:// or redis+cluster:// URL")
        }
        return (host.isEmpty ? "127.0.0.1" : host, components.port ?? 6379)
    }
}
