import Dispatch
import Foundation
import Logging

/// A connection to Redis, a single server or a Redis Cluster, over hiredis's blocking API,
/// with reconnects and pipelining.
///
/// Two ways to use it:
/// - `send`, `pipeline`, `evalScript` (async): the blocking hiredis I/O runs on this
///   connection's own serial `DispatchQueue`, never on Swift's cooperative thread pool; the
///   calling task is suspended until the reply arrives.
/// - `sendBlocking`, `pipelineBlocking`, `evalScriptBlocking`: the I/O runs on the calling
///   thread. Use these only from a thread you own (for example a fan-out worker thread that
///   issues many pipelines in a row and wants no per-call hop); calling them from async code
///   would park a cooperative thread for the whole round trip.
///
/// Both may be mixed: every command holds its server connection's lock from the first byte
/// written to the last reply read, so replies never interleave.
///
/// For a single Redis (`redis://`) this is one socket; `RedisNodeConnection` describes its
/// reconnect and retry rules. For a cluster (`redis+cluster://`) it is one socket per master,
/// and each command goes to the master that owns its keys' hash slot (`RedisClusterRouter`).
///
/// In both modes a command whose keys hash to two cluster slots is refused with `.routing`
/// before anything is sent, so the single-node tests catch what a cluster would refuse.
public final class RedisConnection: @unchecked Sendable {
    /// Counters for metrics and tests.
    public struct Statistics: Sendable, Hashable {
        /// Connections opened after the first one.
        public var reconnects = 0
        /// Read-only commands or pipelines sent again after a connection failure.
        public var retries = 0
        /// Times a NOSCRIPT reply was repaired by loading the script and running it again.
        public var scriptReloads = 0
        /// Cluster: commands sent again to another node after `MOVED`.
        public var moved = 0
        /// Cluster: commands sent to a migration's target after `ASK`.
        public var asked = 0
        /// Cluster: commands sent again after `TRYAGAIN`, `CLUSTERDOWN`, `LOADING` or an
        /// unreachable master.
        public var clusterRetries = 0
        /// Cluster: times the slot map was read again from the cluster.
        public var topologyRefreshes = 0
        /// Cluster: `moved + asked`, commands that went to another node than the map said.
        public var redirections: Int { moved + asked }

        static func + (left: Statistics, right: Statistics) -> Statistics {
            var sum = left
            sum.reconnects += right.reconnects
            sum.retries += right.retries
            sum.scriptReloads += right.scriptReloads
            sum.moved += right.moved
            sum.asked += right.asked
            sum.clusterRetries += right.clusterRetries
            sum.topologyRefreshes += right.topologyRefreshes
            return sum
        }
    }

    private enum Backend {
        case node(RedisNodeConnection)
        case cluster(RedisClusterRouter)
    }

    public let configuration: RedisConfiguration
    private let backend: Backend
    private let queue: DispatchQueue

    /// Creates the connection without connecting; the first command connects.
    public init(configuration: RedisConfiguration, logger: Logger = Logger(label: "herald.redis")) {
        self.configuration = configuration
        self.queue = DispatchQueue(label: "herald.redis.connection.\(configuration.endpoint)")
        if configuration.cluster != nil {
            backend = .cluster(RedisClusterRouter(configuration: configuration, logger: logger))
        } else {
            backend = .node(RedisNodeConnection(configuration: configuration, logger: logger))
        }
    }

    /// Creates a connection and connects it (off the cooperative pool), so a wrong address
    /// fails here rather than at the first command.
    public static func connect(
        configuration: RedisConfiguration, logger: Logger = Logger(label: "herald.redis")
    ) async throws -> RedisConnection {
        let connection = RedisConnection(configuration: configuration, logger: logger)
        try await connection.onQueue { try connection.connectBlocking() }
        return connection
    }

    /// Connects now on the calling thread if not yet connected (for a cluster: reads its slot
    /// map). See the type's threading note.
    public func connectBlocking() throws {
        switch backend {
        case .node(let node): try node.connectBlocking()
        case .cluster(let router): _ = try router.slotMap()
        }
    }

    /// Checks that the configuration fits the server before a process starts work, and throws
    /// one line saying what is wrong: a `redis://` URL pointing at a cluster node, a
    /// `redis+cluster://` URL pointing at a plain Redis, no seed answering, or hash slots
    /// without a master.
    public func verify() async throws {
        try await onQueue {
            switch self.backend {
            case .node(let node):
                let info = try node.sendBlocking(.info("cluster")).string ?? ""
                if info.contains("cluster_enabled:1") {
                    let endpoint = self.configuration.endpoint
                    throw RedisError(
                        code: .cluster, message: "\(endpoint) is a Redis Cluster node; use redis+cluster://\(endpoint)")
                }
            case .cluster(let router):
                try router.verify()
            }
        }
    }

    /// Closes the sockets; later commands fail with `.closed`. Waits for an in-flight command.
    public func close() {
        switch backend {
        case .node(let node): node.close()
        case .cluster(let router): router.close()
        }
    }

    public var statistics: Statistics {
        switch backend {
        case .node(let node): node.statistics
        case .cluster(let router): router.statistics
        }
    }

    // MARK: Async API

    /// Sends one command and returns its reply; a Redis error reply throws `.server`.
    public func send(_ command: RedisCommand) async throws -> RedisValue {
        try await onQueue { try self.sendBlocking(command) }
    }

    /// Sends all `commands` in one round trip (for a cluster: one per master, all masters at
    /// once) and returns one result per command, in order. A Redis error reply is only that
    /// command's `.failure`; a connection failure throws.
    public func pipeline(_ commands: [RedisCommand]) async throws -> [Result<RedisValue, RedisError>] {
        try await onQueue { try self.pipelineBlocking(commands) }
    }

    /// Runs `script` with `EVALSHA`, loading it and trying again if Redis answers NOSCRIPT.
    public func evalScript<Key: RedisArgument, Argument: RedisArgument>(
        _ script: RedisScript, keys: [Key], arguments: [Argument]
    ) async throws -> RedisValue {
        try await send(.evalScript(script, keys: keys, arguments: arguments))
    }

    /// Every key matching `pattern` (`SCAN MATCH`; on a cluster, on every master). A key may be
    /// listed twice if it was moved during the scan. Meant for tools and tests, not hot paths.
    public func keys(matching pattern: String, count: Int = 1_000) async throws -> [String] {
        try await onQueue {
            var keys: [String] = []
            try self.forEachKeyPageBlocking(matching: pattern, count: count) { page in
                keys += page.map { String(decoding: $0, as: UTF8.self) }
            }
            return keys
        }
    }

    /// Sends a keyless command (`INFO`, `CONFIG RESETSTAT`, ...) to every master that serves
    /// slots now (a single node: to it) and returns each reply with the node's `host:port`.
    /// For tools that look at each node, such as the benchmark's per-master CPU.
    public func sendToEveryMaster(_ command: RedisCommand) async throws -> [(endpoint: String, reply: RedisValue)] {
        try await onQueue {
            switch self.backend {
            case .node(let node):
                return [(self.configuration.endpoint, try node.sendBlocking(command))]
            case .cluster(let router):
                var replies: [(endpoint: String, reply: RedisValue)] = []
                try router.forEachMaster { node in replies.append((node.configuration.endpoint, try node.sendBlocking(command))) }
                return replies
            }
        }
    }

    /// Unlinks every key matching `pattern`, page by page; returns how many were removed.
    @discardableResult
    public func deleteKeys(matching pattern: String, count: Int = 1_000) async throws -> Int {
        try await onQueue { try self.deleteKeysBlocking(matching: pattern, count: count) }
    }

    // MARK: Blocking API (calling thread)

    /// Blocking `send`: run only on a thread you own.
    public func sendBlocking(_ command: RedisCommand) throws -> RedisValue {
        switch backend {
        case .node(let node):
            try Self.checkOneSlot(command)
            return try node.sendBlocking(command)
        case .cluster(let router):
            return try router.sendBlocking(command)
        }
    }

    /// Blocking `pipeline`: run only on a thread you own.
    ///
    /// Scripts of `.evalScript` commands not yet loaded on a server are loaded in the same
    /// round trip, ahead of the commands, so ordering is kept. If one is missing anyway
    /// (someone ran `SCRIPT FLUSH` meanwhile, or a replica was promoted), the commands that got
    /// NOSCRIPT are run again after loading it, that is after the rest of the pipeline. On a
    /// cluster, commands keep their relative order per master, not across masters.
    public func pipelineBlocking(_ commands: [RedisCommand]) throws -> [Result<RedisValue, RedisError>] {
        switch backend {
        case .node(let node):
            for command in commands { try Self.checkOneSlot(command) }
            return try node.pipelineBlocking(commands)
        case .cluster(let router):
            return try router.pipelineBlocking(commands)
        }
    }

    /// Blocking pipeline whose replies `body` reads in place (`RedisReplyReference`), without
    /// the copy into `RedisValue`s that `pipelineBlocking` makes: one per reply, one per
    /// element of an array reply. The replies are freed when `body` returns. Read-only
    /// pipelines are retried once after a connection failure, before `body` sees anything.
    /// Scripts are not supported here (no NOSCRIPT handling): use `pipelineBlocking`.
    ///
    /// Server error replies reach `body` as references with `isError`; `error(in:of:)` turns
    /// one into the `RedisError` `pipelineBlocking` would have returned. On a cluster,
    /// redirections are followed before `body` runs.
    public func withPipelineRepliesBlocking<T>(
        _ commands: [RedisCommand], _ body: ([RedisReplyReference]) throws -> T
    ) throws -> T {
        switch backend {
        case .node(let node):
            for command in commands { try Self.checkOneSlot(command) }
            return try node.withPipelineRepliesBlocking(commands, body)
        case .cluster(let router):
            return try router.withPipelineRepliesBlocking(commands, body)
        }
    }

    /// Sends read-only `commands` in order and hands each reply to `body` in place, with the
    /// next command already on the wire while `body` works through the current reply: Redis
    /// prepares one reply while the caller handles the one before. At most two replies are
    /// outstanding, so memory stays at about two replies however many commands there are.
    ///
    /// After a connection failure the commands whose replies `body` has not handled are sent
    /// again, once (a handled reply is never handed over twice). An error thrown by `body`
    /// ends the stream and discards the connection, which still owes the read-ahead reply;
    /// the next use reconnects. Server error replies reach `body` as references with
    /// `isError` (`error(in:of:)`). Scripts are not supported.
    ///
    /// On a cluster, every master streams its own commands at once, each with its own
    /// read-ahead: `body` still runs on the calling thread, one reply at a time, each
    /// master's replies in their order, the masters interleaved. `body` gets each command's
    /// index in `commands`, and a redirected command's reply after the rest.
    ///
    /// With `costs` (one per command: what its reply holds, in any unit) more commands go out
    /// ahead while the replies outstanding cost at most `budget` together (per master on a
    /// cluster), so many small replies are pipelined instead of costing a round trip each.
    ///
    /// `body` must not use this connection: it runs with the connection held, and the
    /// read-ahead reply is still owed on it. Use another connection for anything else.
    public func streamRepliesBlocking(
        _ commands: [RedisCommand], costs: [Int]? = nil, budget: Int = 0,
        _ body: (_ index: Int, _ reply: RedisReplyReference) throws -> Void
    ) throws {
        try streamRepliesBlocking(commands, costs: costs, budget: budget) { index, reply, _ in try body(index, reply) }
    }

    /// `streamRepliesBlocking(_:costs:budget:_:)` where `body` may add commands through its
    /// `tail` (`RedisStreamTail`), numbered after every command before them.
    ///
    /// On a single node they go out on the same stream behind the commands already queued, so
    /// what a reply asks for next is read without the stream running dry. On a cluster, where
    /// every master streams a list of its own, the commands added while one list is streamed
    /// are streamed together once it is done.
    public func streamRepliesBlocking(
        _ commands: [RedisCommand], costs: [Int]? = nil, budget: Int = 0,
        _ body: (_ index: Int, _ reply: RedisReplyReference, _ tail: inout RedisStreamTail) throws -> Void
    ) throws {
        switch backend {
        case .node(let node):
            for command in commands { try Self.checkOneSlot(command) }
            try node.streamRepliesBlocking(commands, costs: costs, budget: budget) { index, reply, tail in
                try body(index, reply, &tail)
                for command in tail.commands { try Self.checkOneSlot(command) }
            }
        case .cluster(let router):
            var batch = commands
            var batchCosts = costs
            var first = 0
            while !batch.isEmpty {
                var next = RedisStreamTail()
                try router.streamRepliesBlocking(batch, costs: batchCosts, budget: budget) { index, reply in
                    try body(first + index, reply, &next)
                }
                first += batch.count
                batch = next.commands
                batchCosts = costs == nil ? nil : next.costs
            }
        }
    }

    /// The `RedisError` for an error reply of `command` read with `withPipelineRepliesBlocking`.
    public func error(in reply: RedisReplyReference, of command: RedisCommand) -> RedisError? {
        switch backend {
        case .node(let node): node.error(in: reply, of: command)
        case .cluster(let router): reply.error(command: command.label, endpoint: router.endpoint(of: command))
        }
    }

    /// Blocking `evalScript`: run only on a thread you own.
    public func evalScriptBlocking<Key: RedisArgument, Argument: RedisArgument>(
        _ script: RedisScript, keys: [Key], arguments: [Argument]
    ) throws -> RedisValue {
        try sendBlocking(.evalScript(script, keys: keys, arguments: arguments))
    }

    /// Hands the keys matching `pattern` to `body` one `SCAN` page at a time (on a cluster,
    /// every master's pages in turn).
    public func forEachKeyPageBlocking(matching pattern: String, count: Int, _ body: ([[UInt8]]) throws -> Void) throws {
        func scanOne(_ node: RedisNodeConnection) throws {
            var cursor: UInt64 = 0
            repeat {
                let reply = try node.sendBlocking(.scan(cursor: cursor, match: pattern, count: count))
                guard let page = reply.scanPage else {
                    throw RedisError(code: .unexpectedReply, message: "SCAN MATCH \(pattern) answered \(reply)")
                }
                let keys = page.elements.compactMap(\.bytes)
                if !keys.isEmpty { try body(keys) }
                cursor = page.cursor
            } while cursor != 0
        }
        switch backend {
        case .node(let node): try scanOne(node)
        case .cluster(let router): try router.forEachMaster(scanOne)
        }
    }

    /// Blocking `deleteKeys(matching:)`.
    @discardableResult
    public func deleteKeysBlocking(matching pattern: String, count: Int = 1_000) throws -> Int {
        var removed = 0
        // SCAN goes on correctly while keys are removed between its pages.
        try forEachKeyPageBlocking(matching: pattern, count: count) { page in
            for result in try pipelineBlocking(page.map { RedisCommand("UNLINK", $0) }) {
                removed += try result.get().int ?? 0
            }
        }
        return removed
    }

    // MARK: Internals

    /// Refuses a command whose keys hash to two cluster slots, in single-node mode too. Only
    /// commands that can name several keys are checked; one key cannot disagree with itself.
    static func checkOneSlot(_ command: RedisCommand) throws {
        guard RedisClusterKeys.maySpanSlots(command) else { return }
        do {
            _ = try RedisClusterKeys.slot(of: command)
        } catch {
            throw RedisError(code: .routing, message: error.description)
        }
    }

    /// Runs blocking work on this connection's serial queue and resumes the caller after.
    private func onQueue<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try work() }) }
        }
    }
}

/// Commands a stream's reply handler adds (`RedisConnection.streamRepliesBlocking`), each with
/// its cost in the stream's unit (0 when the stream has no budget).
public struct RedisStreamTail {
    public private(set) var commands: [RedisCommand] = []
    public private(set) var costs: [Int] = []

    public init() {}

    public mutating func append(_ command: RedisCommand, cost: Int = 0) {
        commands.append(command)
        costs.append(cost)
    }
}
