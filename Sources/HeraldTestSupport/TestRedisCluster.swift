import Foundation

/// A private Redis Cluster for one test: `masters` masters and as many replicas, started by
/// `scripts/redis-cluster` on free loopback ports, stopped and removed when this value goes
/// away. The helpers drive the cluster the way an operator would, through `redis-cli`.
public final class TestRedisCluster: @unchecked Sendable {
    /// The suites that start clusters of their own run in `make test`'s cluster pass
    /// (`HERALD_TEST_CLUSTER_SUITES=1`), on their own: six servers each and a 200,000-device
    /// reshard would starve the timing-sensitive fault tests of the main pass.
    public static var suitesEnabled: Bool { ProcessInfo.processInfo.environment["HERALD_TEST_CLUSTER_SUITES"] == "1" }

    /// `redis+cluster://` with the masters as seeds.
    public let url: String
    /// Every node's port, the first `masters` of them masters at the start.
    public let ports: [Int]
    private let directory: URL

    public init(masters: Int = 3) throws {
        directory = try ToolPaths.scratchDirectory("redis-cluster")
        let output = try Self.run(Self.script, ["start", directory.path, String(masters)])
        guard let line = output.split(separator: "\n").last, line.hasPrefix("redis+cluster://") else {
            throw TestServerError(message: "scripts/redis-cluster start printed no URL: \(output)")
        }
        url = String(line)
        let listed = try String(contentsOf: directory.appendingPathComponent("ports"), encoding: .utf8)
        ports = listed.split(separator: "\n").compactMap { Int($0) }
    }

    deinit {
        _ = try? Self.run(Self.script, ["stop", directory.path])
    }

    /// `redis-cli -p port args...`'s output.
    @discardableResult
    public func cli(_ port: Int, _ arguments: String...) throws -> String {
        try Self.run("redis-cli", ["-h", "127.0.0.1", "-p", String(port)] + arguments)
    }

    /// The node id of the node on `port`.
    public func nodeId(_ port: Int) throws -> String {
        try cli(port, "CLUSTER", "MYID").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The ports of the nodes that are masters serving slots now, per `CLUSTER NODES` of a live node.
    public func masters() throws -> [Int] {
        try nodes().filter { $0.isMaster && !$0.isFailed && $0.servesSlots }.map(\.port)
    }

    /// The master that serves hash slot `slot` now.
    public func master(ofSlot slot: Int) throws -> Int? {
        try nodes().first { $0.isMaster && !$0.isFailed && $0.slots.contains { $0.contains(slot) } }?.port
    }

    /// Moves `count` hash slots from the master on `from` to the master on `to` with
    /// `redis-cli --cluster reshard`, as an operator would.
    public func reshard(from: Int, to: Int, count: Int, pipeline: Int = 10) throws {
        // redis-cli refuses to reshard until every node has heard of the last change.
        try waitUntil(timeout: 30, "the cluster's nodes to agree") { (try? isConsistent()) == true }
        try Self.run(
            "redis-cli",
            [
                "--cluster", "reshard", "127.0.0.1:\(to)", "--cluster-from", try nodeId(from), "--cluster-to", try nodeId(to),
                "--cluster-slots", String(count), "--cluster-yes", "--cluster-pipeline", String(pipeline),
            ])
    }

    /// `kill -9` of the node on `port`.
    public func kill(_ port: Int) throws {
        let pid = try String(contentsOf: directory.appendingPathComponent("\(port)/redis.pid"), encoding: .utf8)
        guard let value = Int32(pid.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw TestServerError(message: "no pid for the node on port \(port)")
        }
        Foundation.kill(value, SIGKILL)
    }

    /// Starts the node on `port` again after `kill`, on its own data; it rejoins the cluster (as
    /// a replica of whichever node took over its slots).
    public func restart(_ port: Int) throws {
        try Self.run(Self.script, ["restart", directory.path, String(port)])
    }

    /// Waits until every node still running reports `cluster_state:ok` and all slots are served.
    public func waitUntilHealthy(except dead: Set<Int> = [], timeout: Double = 30) throws {
        try waitUntil(timeout: timeout, "the cluster to be ok again") {
            ports.filter { !dead.contains($0) }.allSatisfy { port in
                let info = (try? cli(port, "CLUSTER", "INFO")) ?? ""
                return info.contains("cluster_state:ok") && info.contains("cluster_slots_ok:16384")
            }
        }
    }

    /// `redis-cli --cluster check`'s verdict: true when all slots are covered and none is open.
    public func isConsistent() throws -> Bool {
        let output = (try? Self.run("redis-cli", ["--cluster", "check", "127.0.0.1:\(try masters()[0])"])) ?? ""
        return output.contains("[OK] All 16384 slots covered.") && !output.contains("[WARNING]") && !output.contains("[ERR]")
    }

    /// One line of `CLUSTER NODES`.
    public struct Node: Sendable {
        public var port: Int
        public var isMaster: Bool
        public var isFailed: Bool
        public var slots: [ClosedRange<Int>]
        public var servesSlots: Bool { !slots.isEmpty }
    }

    public func nodes() throws -> [Node] {
        var lastError: (any Error)?
        for port in ports {
            do {
                return try cli(port, "CLUSTER", "NODES").split(separator: "\n").compactMap(Self.node)
            } catch {
                lastError = error
            }
        }
        throw lastError ?? TestServerError(message: "no cluster node answered")
    }

    private static func node(_ line: Substring) -> Node? {
        let fields = line.split(separator: " ")
        guard fields.count >= 8, let colon = fields[1].firstIndex(of: ":") else { return nil }
        let address = fields[1][fields[1].index(after: colon)...]
        guard let port = Int(address.prefix(while: { $0 != "@" })) else { return nil }
        let flags = fields[2].split(separator: ",")
        let slots: [ClosedRange<Int>] = fields.dropFirst(8).compactMap { range in
            guard !range.hasPrefix("[") else { return nil }
            let bounds = range.split(separator: "-").compactMap { Int($0) }
            return bounds.count == 2 ? bounds[0]...bounds[1] : bounds.first.map { $0...$0 }
        }
        return Node(port: port, isMaster: flags.contains("master"), isFailed: flags.contains("fail"), slots: slots)
    }

    private static var script: String { ToolPaths.repositoryRoot.appendingPathComponent("scripts/redis-cluster").path }

    /// Runs a tool to completion; its output, or an error with its output. The output goes
    /// through a file, not a pipe: the daemonized redis-servers inherit the descriptor and
    /// would keep a pipe open for ever.
    @discardableResult
    private static func run(_ tool: String, _ arguments: [String]) throws -> String {
        let outputFile = FileManager.default.temporaryDirectory.appendingPathComponent("herald-cli-\(UUID().uuidString)")
        FileManager.default.createFile(atPath: outputFile.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: outputFile) }
        let output = try FileHandle(forWritingTo: outputFile)
        defer { try? output.close() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [tool] + arguments
        process.standardOutput = output
        process.standardError = output
        try withTerminationSignalsUnblocked { try process.run() }
        process.waitUntilExit()
        let text = (try? String(contentsOf: outputFile, encoding: .utf8)) ?? ""
        guard process.terminationStatus == 0 else {
            throw TestServerError(message: "\(tool) \(arguments.joined(separator: " ")) failed: \(text.suffix(800))")
        }
        return text
    }
}
