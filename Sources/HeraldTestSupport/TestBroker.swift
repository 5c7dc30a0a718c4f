import Foundation

/// A Kafka-compatible broker for one test suite: a private Tansu process on a free port, or
/// the external cluster named by `HERALD_TEST_KAFKA_BROKERS` (then nothing is started).
///
/// Tansu keeps everything in memory, so topics and groups vanish with the process; tests
/// still use unique topic and group names because an external broker is shared.
public final class TestBroker: @unchecked Sendable {
    /// `host:port[,host:port...]` for the clients' `bootstrap.servers`.
    public let bootstrapServers: String
    /// True when the broker is an external one (for example real Apache Kafka), which
    /// filters aborted transactions from `read_committed` consumers; Tansu does not.
    public let isExternal: Bool

    private let process: ChildProcess?
    private let scratch: URL?

    /// The environment variable that points the tests at an external broker.
    public static let externalBrokersVariable = "HERALD_TEST_KAFKA_BROKERS"

    /// The consumer-group session timeout of the tests' clients and workers. Tansu holds each
    /// group join for about half of it, so the embedded broker gets 2 s (a join in about 1 s;
    /// heartbeats come from librdkafka's own threads, which a loaded machine still runs);
    /// Apache Kafka refuses less than its `group.min.session.timeout.ms`, 6 s by default.
    public static var sessionTimeoutMs: Int { externalBootstrapServers == nil ? 2_000 : 6_000 }

    /// The session timeout of a worker that a test stops with SIGSTOP while it publishes (the
    /// fault suites): long enough that the broker keeps the stopped worker in its groups meanwhile,
    /// however loaded the machine.
    public static let stoppedWorkerSessionTimeoutMs = 6_000

    /// The external brokers named by `HERALD_TEST_KAFKA_BROKERS`, when it is set and not empty.
    static var externalBootstrapServers: String? {
        ProcessInfo.processInfo.environment[externalBrokersVariable].flatMap { $0.isEmpty ? nil : $0 }
    }

    public init(name: String = "tansu") throws {
        if let external = Self.externalBootstrapServers {
            bootstrapServers = external
            isExternal = true
            process = nil
            scratch = nil
            return
        }
        let tansu = ToolPaths.tansu
        guard FileManager.default.isExecutableFile(atPath: tansu) else {
            throw TestServerError(message: "Tansu broker not found at \(tansu); run scripts/bootstrap or set HERALD_TANSU")
        }
        let directory = try ToolPaths.scratchDirectory(name)
        let port = freeLocalPort()
        let url = "tcp://127.0.0.1:\(port)"
        let child: ChildProcess
        do {
            child = try ChildProcess(
                name: "tansu",
                executable: tansu,
                arguments: ["broker", "--listener-url", url, "--advertised-listener-url", url, "--storage-engine", "memory://tansu/"],
                logFile: directory.appendingPathComponent("tansu.log")
            )
            try waitUntil(timeout: 10, "Tansu to accept connections on port \(port)") {
                child.isRunning && isAcceptingConnections(port: port)
            }
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
        process = child
        scratch = directory
        bootstrapServers = "127.0.0.1:\(port)"
        isExternal = false
    }

    /// Stops the broker (if this object started one) and removes its scratch folder.
    public func stop() {
        // Tansu keeps its data in memory only, so there is nothing to shut down gracefully;
        // SIGTERM would also wait for clients that are still connected.
        process?.stop(signal: SIGKILL)
        if let scratch { try? FileManager.default.removeItem(at: scratch) }
    }

    /// Sends `signal` to the broker process this object started (SIGSTOP pauses it, SIGCONT
    /// resumes it, as a stalled broker would); nothing for an external broker.
    public func signal(_ signal: Int32) {
        if let process, process.isRunning { kill(process.processIdentifier, signal) }
    }

    /// A name no other test (or earlier run against an external broker) has used.
    public static func uniqueName(_ prefix: String) -> String {
        "\(prefix)-\(UUID().uuidString.prefix(12).lowercased())"
    }

    deinit { stop() }
}
