import Dispatch
import Foundation
import Logging

/// One connection to one Redis server over hiredis's blocking API, with reconnects and
/// pipelining. `RedisConnection` is the public face: it uses one of these for a single
/// Redis, and one per master (through `RedisClusterRouter`) for a cluster.
///
/// Every call does its I/O on the calling thread and holds the connection's lock from the
/// first byte written to the last reply read, so replies never interleave.
///
/// Reconnects: before each command (or pipeline) the connection checks, with one non-blocking
/// peek, that the server has not hung up while it was idle, and reconnects (with backoff,
/// `RedisConfiguration.connectAttempts`) if it has; that is how a Redis restart is absorbed
/// before anything is written. If the socket fails while a command is in flight, the
/// connection is discarded and rebuilt on the next use; the failed command is retried once
/// only when it is read-only (`RedisCommand.isReadOnly`, for a pipeline: every command),
/// because a write may already have been applied. Timeouts are never retried.
final class RedisNodeConnection: @unchecked Sendable {
    let configuration: RedisConfiguration
    /// A serial queue for work on this connection from other threads (a cluster router sends
    /// a pipeline's parts to all masters at once on their queues): serial queues overcommit,
    /// so each gets a thread when it has work, unlike the global concurrent queue.
    let queue: DispatchQueue
    private let logger: Logger

    // Guarded by `lock`: the socket, the scripts it has, the counters.
    private let lock = NSLock()
    private var machine: RedisConnectionStateMachine<HiredisContext>

    /// Creates the connection without connecting; the first command connects.
    init(configuration: RedisConfiguration, logger: Logger = Logger(label: "herald.redis")) {
        self.configuration = configuration
        self.queue = DispatchQueue(label: "herald.redis.node.\(configuration.endpoint)")
        self.logger = logger
        self.machine = RedisConnectionStateMachine(
            connectAttempts: configuration.connectAttempts, initialBackoff: configuration.initialBackoff,
            maximumBackoff: configuration.maximumBackoff)
    }

    /// Connects now on the calling thread if not yet connected. See the type's threading note.
    func connectBlocking() throws {
        lock.lock()
        defer { lock.unlock() }
        _ = try liveContext("connect")
    }

    /// Closes the socket; later commands fail with `.closed`. Waits for an in-flight command.
    func close() {
        lock.lock()
        defer { lock.unlock() }
        machine.close()
    }

    var statistics: RedisConnection.Statistics {
        lock.lock()
        defer { lock.unlock() }
        return machine.statistics
    }

    /// Sends one command and returns its reply; a Redis error reply throws `.server`.
    func sendBlocking(_ command: RedisCommand) throws -> RedisValue {
        try withContext(command.label, retryable: command.isReadOnly) { context in
            try context.append(command)
            var result = try context.readReply(for: command.label)
            if let script = command.script, case .failure(let error) = result, error.serverPrefix == "NOSCRIPT" {
                try reloadLocked(script, context)
                try context.append(command)
                result = try context.readReply(for: command.label)
            }
            return result
        }.get()
    }

    /// Sends all `commands` in one round trip; one result per command, in order.
    ///
    /// Scripts of `.evalScript` commands not yet loaded on this connection are loaded in the
    /// same round trip, ahead of the commands, so ordering is kept. If one is missing anyway
    /// (someone ran `SCRIPT FLUSH` meanwhile), the commands that got NOSCRIPT are run again
    /// after loading it, that is after the rest of the pipeline.
    func pipelineBlocking(_ commands: [RedisCommand]) throws -> [Result<RedisValue, RedisError>] {
        if commands.isEmpty { return [] }
        let label = "pipeline of \(commands.count) commands"
        return try withContext(label, retryable: commands.allSatisfy(\.isReadOnly)) { context in
            var toLoad: [RedisScript] = []
            for index in commands.indices where commands[index].script != nil {
                let script = commands[index].script!
                if !machine.loadedScripts.contains(script.sha1), !toLoad.contains(script) { toLoad.append(script) }
            }
            if !toLoad.isEmpty { try context.append(toLoad.map { RedisCommand.scriptLoad($0.source) }) }
            try context.append(commands)
            for script in toLoad {
                if case .success = try context.readReply(for: "SCRIPT LOAD") { machine.scriptLoaded(script.sha1) }
            }
            var results: [Result<RedisValue, RedisError>] = []
            results.reserveCapacity(commands.count)
            for index in commands.indices { results.append(try context.readReply(for: commands[index].label)) }

            let missing = commands.indices.filter { index in
                guard commands[index].script != nil, case .failure(let error) = results[index] else { return false }
                return error.serverPrefix == "NOSCRIPT"
            }
            if !missing.isEmpty {
                machine.scriptsFlushed()
                var reloaded: Set<String> = []
                for index in missing where reloaded.insert(commands[index].script!.sha1).inserted {
                    try reloadLocked(commands[index].script!, context)
                }
                try context.append(missing.map { commands[$0] })
                for index in missing { results[index] = try context.readReply(for: commands[index].label) }
            }
            return results
        }
    }

    /// Blocking pipeline whose replies `body` reads in place (`RedisReplyReference`), without
    /// the copy into `RedisValue`s that `pipelineBlocking` makes: one per reply, one per
    /// element of an array reply. The replies are freed when `body` returns. Read-only
    /// pipelines are retried once after a connection failure, before `body` sees anything.
    /// Scripts are not supported here (no NOSCRIPT handling): use `pipelineBlocking`.
    ///
    /// Server error replies reach `body` as references with `isError`; `error(in:of:)` turns
    /// one into the `RedisError` `pipelineBlocking` would have returned.
    func withPipelineRepliesBlocking<T>(
        _ commands: [RedisCommand], _ body: ([RedisReplyReference]) throws -> T
    ) throws -> T {
        precondition(commands.allSatisfy { $0.script == nil }, "withPipelineRepliesBlocking does not load scripts")
        if commands.isEmpty { return try body([]) }
        let label = "pipeline of \(commands.count) commands"
        let replies = try withContext(label, retryable: commands.allSatisfy(\.isReadOnly)) { context in
            try context.append(commands)
            var replies: [RedisReplyReference] = []
            replies.reserveCapacity(commands.count)
            do {
                for index in commands.indices { replies.append(try context.readReplyReference(for: commands[index].label)) }
            } catch {
                for reply in replies { HiredisContext.free(reply) }
                throw error
            }
            return replies
        }
        defer { for reply in replies { HiredisContext.free(reply) } }
        return try body(replies)
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
    /// `body` may add commands through its `tail`: they go out on the same stream after those
    /// already queued, with their replies handed over (and their indices counted) after them,
    /// so a reply can decide what to read next without the stream running dry.
    ///
    /// With `costs` (one per command, in any unit, say the registrations a reply holds) more
    /// commands go out ahead as long as the replies outstanding cost at most `budget`
    /// together: small replies are then pipelined instead of waiting a round trip each, and
    /// what is in flight stays bounded by the budget (or two replies, whichever is more).
    ///
    /// `body` must not use this connection: it runs with the connection held, and the
    /// read-ahead reply is still owed on it. Use another connection for anything else.
    func streamRepliesBlocking(
        _ commands: [RedisCommand], costs: [Int]? = nil, budget: Int = 0,
        _ body: (_ index: Int, _ reply: RedisReplyReference, _ tail: inout RedisStreamTail) throws -> Void
    ) throws {
        precondition(costs.map { $0.count == commands.count } ?? true, "one cost per command")
        guard !commands.isEmpty else { return }
        var commands = commands
        // Without costs one reply is read ahead, however small.
        let budgeted = costs != nil
        var costs = costs ?? Array(repeating: 0, count: commands.count)
        Self.checkStreamable(commands)
        let label = "stream of \(commands.count) commands"
        lock.lock()
        defer { lock.unlock() }
        var handled = 0
        var retried = false
        while handled < commands.count {
            let live = try liveContext(label)
            var sent = handled
            // The cost of the replies sent and not yet handled.
            var outstanding = 0
            do {
                while handled < commands.count {
                    while sent < commands.count && (sent < handled + 2 || (budgeted && outstanding + costs[sent] <= budget)) {
                        try live.append(commands[sent])
                        outstanding += costs[sent]
                        sent += 1
                    }
                    try live.flush(for: commands[handled].label)
                    let reply = try live.readReplyReference(for: commands[handled].label)
                    defer { HiredisContext.free(reply) }
                    var tail = RedisStreamTail()
                    do {
                        try body(handled, reply, &tail)
                        Self.checkStreamable(tail.commands)
                    } catch {
                        machine.socketLost()
                        throw BodyFailure(error: error)
                    }
                    commands += tail.commands
                    costs += tail.costs
                    outstanding -= costs[handled]
                    handled += 1
                }
            } catch let failure as BodyFailure {
                throw failure.error
            } catch let error as RedisError where error.breaksConnection {
                if machine.commandFailed(error, readOnly: true, alreadyRetried: retried) == .retry {
                    retried = true
                    logger.warning(
                        "retrying read-only commands after a connection failure",
                        metadata: ["commands": "\(label)", "from": "\(handled)", "error": "\(error)"])
                    continue
                }
                throw error
            }
        }
    }

    /// A stream takes read-only commands without scripts: it may send them again after a
    /// broken connection.
    private static func checkStreamable(_ commands: [RedisCommand]) {
        precondition(
            commands.allSatisfy { $0.script == nil && $0.isReadOnly },
            "streamRepliesBlocking takes read-only commands without scripts"
        )
    }

    /// Carries an error thrown by a caller's body past the connection-failure handling.
    private struct BodyFailure: Error {
        let error: any Error
    }

    /// The `RedisError` for an error reply of `command` read with `withPipelineRepliesBlocking`.
    func error(in reply: RedisReplyReference, of command: RedisCommand) -> RedisError? {
        reply.error(command: command.label, endpoint: configuration.endpoint)
    }

    /// `EVALSHA`, loading the script on NOSCRIPT.
    func evalScriptBlocking<Key: RedisArgument, Argument: RedisArgument>(
        _ script: RedisScript, keys: [Key], arguments: [Argument]
    ) throws -> RedisValue {
        try sendBlocking(.evalScript(script, keys: keys, arguments: arguments))
    }

    // MARK: Internals (all called with `lock` held)

    private func reloadLocked(_ script: RedisScript, _ context: HiredisContext) throws {
        machine.scriptReloaded()
        logger.debug("loading Lua script after NOSCRIPT", metadata: ["sha1": "\(script.sha1)"])
        try context.append(.scriptLoad(script.source))
        _ = try context.readReply(for: "SCRIPT LOAD").get()
        machine.scriptLoaded(script.sha1)
    }

    /// Runs `body` with a live context under the lock, applying the reconnect/retry rules.
    private func withContext<T>(_ label: String, retryable: Bool, _ body: (HiredisContext) throws -> T) throws -> T {
        lock.lock()
        defer { lock.unlock() }
        var retried = false
        while true {
            let live = try liveContext(label)
            do {
                return try body(live)
            } catch let error as RedisError where error.breaksConnection {
                guard machine.commandFailed(error, readOnly: retryable, alreadyRetried: retried) == .retry else { throw error }
                retried = true
                logger.warning(
                    "retrying a read-only command after a connection failure", metadata: ["command": "\(label)", "error": "\(error)"])
            }
        }
    }

    /// The current context if it is usable, else a new one (with backoff between attempts).
    private func liveContext(_ label: String) throws -> HiredisContext {
        switch machine.acquire() {
        case .fail:
            throw closedError(label)
        case .use(let context):
            if !context.isBroken, !context.peerHasHungUp { return context }
            machine.socketLost()
        case .connect:
            break
        }
        var attempt = 1
        while true {
            do {
                let fresh = try openContext()
                if machine.connected(fresh) {
                    logger.info("reconnected to Redis", metadata: ["endpoint": "\(configuration.endpoint)", "attempt": "\(attempt)"])
                }
                return fresh
            } catch let error as RedisError {
                switch machine.connectFailed(attempt: attempt, error: error) {
                case .giveUp:
                    throw RedisError(
                        code: .connection,
                        message: "could not connect to \(configuration.endpoint) after \(attempt) attempts: \(error.message)",
                        serverPrefix: error.serverPrefix
                    )
                case .retry(let delay):
                    logger.debug("Redis connect attempt failed", metadata: ["attempt": "\(attempt)", "error": "\(error)"])
                    usleep(UInt32(delay * 1_000_000))
                    attempt += 1
                }
            }
        }
    }

    private func openContext() throws -> HiredisContext {
        let endpoint = configuration.endpoint
        let fresh = try HiredisContext.connect(
            host: configuration.host, port: configuration.port,
            timeout: configuration.connectTimeout, endpoint: endpoint
        )
        try fresh.setCommandTimeout(configuration.commandTimeout)
        var setup: [RedisCommand] = []
        if let password = configuration.password { setup.append(.auth(username: configuration.username, password: password)) }
        if configuration.database != 0 { setup.append(.select(configuration.database)) }
        for command in setup { try fresh.append(command) }
        for command in setup { _ = try fresh.readReply(for: command.label).get() }
        return fresh
    }

    private func closedError(_ label: String) -> RedisError {
        RedisError(code: .closed, message: "\(label) on \(configuration.endpoint): the connection was closed")
    }
}
