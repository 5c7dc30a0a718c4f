import Dispatch
import Foundation
import Logging

/// The cluster side of `RedisConnection`: one `RedisNodeConnection` per master, opened on
/// first use, and the rules that send each command to the master owning its hash slot.
///
/// - The slot map is this router's own (`RedisClusterTopology`): read once from `CLUSTER
///   SLOTS`, patched by each `MOVED`, read again after a master could not be reached or a slot
///   had no master, one read at a time. Its health changes are logged.
/// - `MOVED`: the map is patched and the command sent to the new owner. `ASK`: the command is
///   sent to the migration's target after `ASKING`, the map left as it is. At most
///   `maximumRedirects` rounds of redirections per call.
/// - `TRYAGAIN`, `CLUSTERDOWN`, `LOADING`, `MASTERDOWN` and a master that cannot be connected
///   to: none of them means the command ran, so reads and writes alike are sent again after a
///   pause (10 ms, doubling, at most 500 ms) until `clusterRetrySeconds` have passed.
/// - A pipeline is split per master; the parts go out on all masters at once, each on its
///   node's own serial queue (`RedisNodeConnection.queue`: a thread of its own whenever it has
///   work, never a thread of the global concurrent queue, where blocked work waits about a
///   second for a thread on Linux), and the results come back in the caller's order. Retries
///   pause the caller's thread, which is a blocking thread already.
/// - A command whose keys hash to two slots is refused before anything is sent (`.routing`).
final class RedisClusterRouter: @unchecked Sendable {
    let configuration: RedisConfiguration
    private let logger: Logger

    // Guarded by `topologyLock`; waited on while another caller reads the slot map.
    private let topologyLock = NSCondition()
    private var topology = RedisClusterTopology()

    // Guarded by `lock`.
    private let lock = NSLock()
    private var nodes: [RedisClusterEndpoint: RedisNodeConnection] = [:]
    private var counters = RedisConnection.Statistics()
    private var isClosed = false

    init(configuration: RedisConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    var statistics: RedisConnection.Statistics {
        lock.withLock { nodes.values.reduce(counters) { $0 + $1.statistics } }
    }

    func close() {
        let open = lock.withLock {
            isClosed = true
            defer { nodes.removeAll() }
            return Array(nodes.values)
        }
        for node in open { node.close() }
    }

    // MARK: Topology

    /// The current slot map, read from the seeds the first time.
    func slotMap() throws -> RedisClusterSlotMap {
        try obtain(reason: "first use") { $0.current() }.map
    }

    /// A slot map newer than generation `seen` (nil: read one now): another caller's read when
    /// one ran since or runs now, else this caller's.
    @discardableResult
    func refresh(reason: String, seen: Int? = nil) throws -> RedisClusterSlotMap {
        try obtain(reason: reason) { $0.refresh(seen: seen) }.map
    }

    /// Runs the topology's answer to `ask`: the map it has, a wait for another caller's read,
    /// or a read by this caller (outside the lock).
    private func obtain(
        reason: String, _ ask: (inout RedisClusterTopology) -> RedisClusterTopology.RefreshAction
    ) throws -> (map: RedisClusterSlotMap, generation: Int) {
        topologyLock.lock()
        var waitedFor: Int?
        while true {
            let action = waitedFor.map { seen in topology.refresh(seen: seen) } ?? ask(&topology)
            switch action {
            case .use(let map):
                defer { topologyLock.unlock() }
                return (map, topology.generation)
            case .wait:
                waitedFor = topology.generation
                topologyLock.wait()
            case .read:
                let known = topology.map
                topologyLock.unlock()
                let outcome = Result { try readSlotMap(known: known, reason: reason) }
                topologyLock.lock()
                let change: RedisClusterTopology.HealthChange?
                switch outcome {
                case .success(let map): change = topology.read(map)
                case .failure(let error): change = topology.readFailed((error as? RedisError)?.message ?? "\(error)")
                }
                let generation = topology.generation
                topologyLock.broadcast()
                topologyLock.unlock()
                report(change)
                return (try outcome.get(), generation)
            }
        }
    }

    /// Logs a change of the cluster's health as this router sees it.
    private func report(_ change: RedisClusterTopology.HealthChange?) {
        guard let change else { return }
        let metadata: Logger.Metadata = ["cluster": "\(configuration.endpoint)", "from": "\(change.from)", "to": "\(change.to)"]
        if change.to == .healthy {
            logger.notice("Redis Cluster healthy", metadata: metadata)
        } else {
            logger.warning("Redis Cluster degraded", metadata: metadata)
        }
    }

    /// A command found a master unreachable or a slot without one: the health says so, and the
    /// map is read again unless one newer than generation `seen` is here already.
    private func trouble(_ reason: String, seen: Int) {
        report(topologyLock.withLock { topology.trouble(reason) })
        _ = try? refresh(reason: reason, seen: seen)
    }

    /// Reads the slot map: from a known master, else a replica, else a seed; the first node
    /// that answers wins. One line naming every node tried when none does.
    private func readSlotMap(known: RedisClusterSlotMap?, reason: String) throws -> RedisClusterSlotMap {
        var candidates: [RedisClusterEndpoint] = []
        if let known { candidates = known.masters + known.replicas.flatMap { $0 } }
        for seed in configuration.cluster ?? [] where !candidates.contains(seed) { candidates.append(seed) }
        var failures: [String] = []
        for candidate in candidates {
            var once = configuration.node(candidate)
            once.connectAttempts = 1
            let probe = RedisNodeConnection(configuration: once, logger: logger)
            defer { probe.close() }
            do {
                let reply = try probe.sendBlocking(.clusterSlots)
                let map = try RedisClusterSlotMap(clusterSlots: reply, answeredBy: candidate)
                guard !map.masters.isEmpty else {
                    failures.append("\(candidate) (it serves no hash slots yet)")
                    continue
                }
                lock.withLock { counters.topologyRefreshes += 1 }
                logger.debug("read the cluster's slot map", metadata: ["from": "\(candidate)", "reason": "\(reason)"])
                return map
            } catch let error as RedisError where error.code == .server {
                if error.message.contains("cluster support disabled") {
                    throw RedisError(
                        code: .cluster,
                        message:
                            "\(candidate) is not a cluster node (cluster support disabled); use redis://\(candidate) for a single Redis")
                }
                failures.append("\(candidate) (\(error.message))")
            } catch let error as RedisClusterTopologyError {
                failures.append("\(candidate) (\(error))")
            } catch {
                failures.append("\(candidate) (\((error as? RedisError)?.message ?? "\(error)"))")
            }
        }
        throw RedisError(code: .cluster, message: "no cluster node answered: \(failures.joined(separator: ", "))")
    }

    /// For start-up: the cluster answers and every hash slot has a master.
    func verify() throws {
        let map = try refresh(reason: "start-up check")
        let uncovered = map.uncoveredRanges
        guard uncovered.isEmpty else {
            let ranges = uncovered.prefix(4).map { $0.count == 1 ? "\($0.lowerBound)" : "\($0.lowerBound)-\($0.upperBound)" }
            throw RedisError(
                code: .cluster,
                message:
                    "\(map.uncoveredSlotCount) hash slots have no master (\(ranges.joined(separator: ", "))\(uncovered.count > 4 ? ", ..." : "")); wait for the failover or run redis-cli --cluster fix"
            )
        }
    }

    /// Runs `body` on a connection to every master that serves slots now (the map is read
    /// again first, so a master replaced by a failover is not visited), in turn.
    func forEachMaster(_ body: (RedisNodeConnection) throws -> Void) throws {
        for master in try refresh(reason: "visiting every master").masters { try body(try node(master)) }
    }

    /// The node a command goes to now, for messages.
    func endpoint(of command: RedisCommand) -> String {
        guard let map = topologyLock.withLock({ topology.map }), let slot = try? RedisClusterKeys.slot(of: command),
            let master = map.master(forSlot: slot)
        else { return configuration.endpoint }
        return master.description
    }

    private func node(_ endpoint: RedisClusterEndpoint) throws -> RedisNodeConnection {
        try lock.withLock {
            if isClosed { throw RedisError(code: .closed, message: "the connection to \(configuration.endpoint) was closed") }
            if let node = nodes[endpoint] { return node }
            let node = RedisNodeConnection(configuration: configuration.node(endpoint), logger: logger)
            nodes[endpoint] = node
            return node
        }
    }

    // MARK: Routing

    /// Where one command goes.
    private enum Route: Equatable {
        case slot(Int)
        /// Keyless: any master will do (`PING`, `INFO`, `CLUSTER ...`).
        case anyMaster
        /// Every master, replies combined (`FLUSHALL`, `SCRIPT ...`, `DBSIZE`, `KEYS`).
        case everyMaster
    }

    private static let everyMaster: Set<String> = ["FLUSHALL", "FLUSHDB", "SCRIPT", "DBSIZE", "KEYS"]
    private static let refused: [String: String] = [
        "SCAN": "SCAN walks one node; use RedisConnection.keys(matching:) or forEachKeyPageBlocking on a cluster",
        "SELECT": "a Redis Cluster has only database 0",
        "AUTH": "credentials belong in the redis+cluster:// URL",
    ]

    private func route(_ command: RedisCommand) throws -> Route {
        do {
            if let slot = try RedisClusterKeys.slot(of: command) { return .slot(slot) }
        } catch {
            throw RedisError(code: .routing, message: error.description)
        }
        let name = command.name.uppercased()
        if let reason = Self.refused[name] { throw RedisError(code: .routing, message: "\(command.label): \(reason)") }
        return Self.everyMaster.contains(name) ? .everyMaster : .anyMaster
    }

    // MARK: Commands

    func sendBlocking(_ command: RedisCommand) throws -> RedisValue {
        let route = try route(command)
        if route == .everyMaster { return try sendToEveryMaster(command) }
        return try pipelineBlocking([command], routes: [route])[0].get()
    }

    /// The route of each command of a pipeline; a command for every master is refused there
    /// (`sendBlocking` sends those).
    private func routes(_ commands: [RedisCommand]) throws -> [Route] {
        try commands.map { command in
            let route = try route(command)
            if route == .everyMaster {
                throw RedisError(code: .routing, message: "\(command.label) goes to every master: send it with send, not in a pipeline")
            }
            return route
        }
    }

    /// Sends `command` to every master and combines the replies: the sum for `DBSIZE`, all
    /// keys for `KEYS`, else the first master's reply once all succeeded.
    private func sendToEveryMaster(_ command: RedisCommand) throws -> RedisValue {
        var replies: [RedisValue] = []
        try forEachMaster { replies.append(try $0.sendBlocking(command)) }
        switch command.name.uppercased() {
        case "DBSIZE": return .integer(replies.reduce(0) { $0 + ($1.int ?? 0) })
        case "KEYS": return .array(replies.flatMap { $0.array ?? [] })
        default: return replies.first ?? .null
        }
    }

    func pipelineBlocking(_ commands: [RedisCommand]) throws -> [Result<RedisValue, RedisError>] {
        try pipelineBlocking(commands, routes: routes(commands))
    }

    private func pipelineBlocking(_ commands: [RedisCommand], routes: [Route]) throws -> [Result<RedisValue, RedisError>] {
        if commands.isEmpty { return [] }
        var results = [Result<RedisValue, RedisError>?](repeating: nil, count: commands.count)
        var retry = RetryBudget(configuration: configuration)
        var pending = Array(commands.indices)
        var asking: [Int: RedisClusterEndpoint] = [:]
        while !pending.isEmpty {
            let plan = try plan(pending, routes: routes, asking: asking)
            let outcomes = runPipelines(plan, commands: commands, asking: asking)
            retry.generation = plan.generation
            var next: [Int] = []
            var pause: RedisError?
            for (group, outcome) in zip(plan.groups, outcomes) {
                switch outcome {
                case .failure(let error) where error.code == .connection:
                    // Nothing was sent: the master is unreachable (killed, failing over).
                    next += group.indices
                    pause = error
                case .failure(let error):
                    throw error
                case .success(let replies):
                    let answers = Self.withoutAsking(replies, indices: group.indices, asking: asking)
                    for (index, result) in zip(group.indices, answers) {
                        guard case .failure(let error) = result, let redirection = Self.redirection(error) else {
                            results[index] = result
                            asking[index] = nil
                            continue
                        }
                        next.append(index)
                        if follow(redirection, index: index, asking: &asking) { pause = error }
                    }
                }
            }
            next += plan.uncovered
            if next.isEmpty { break }
            pause = pause ?? plan.uncoveredPause(configuration)
            try retry.next(after: pause, label: commands[next[0]].label, router: self)
            pending = next.sorted()
        }
        return results.map { $0! }
    }

    func withPipelineRepliesBlocking<T>(_ commands: [RedisCommand], _ body: ([RedisReplyReference]) throws -> T) throws -> T {
        if commands.isEmpty { return try body([]) }
        let routes = try routes(commands)
        var retry = RetryBudget(configuration: configuration)
        var asking: [Int: RedisClusterEndpoint] = [:]
        while true {
            let plan = try plan(Array(commands.indices), routes: routes, asking: asking)
            retry.generation = plan.generation
            var replies = [RedisReplyReference?](repeating: nil, count: commands.count)
            var outcome: Result<T, any Error>?
            var pause: RedisError?
            do {
                outcome = try nest(plan.groups[...], commands: commands, asking: asking, into: &replies) { replies in
                    var redirected = false
                    for (index, reply) in replies.enumerated() {
                        guard reply.isError, let error = reply.error(command: commands[index].label, endpoint: ""),
                            let redirection = Self.redirection(error)
                        else { continue }
                        redirected = true
                        if follow(redirection, index: index, asking: &asking) { pause = error }
                    }
                    guard !redirected, plan.uncovered.isEmpty else { return nil }
                    return Result { try body(replies) }
                }
            } catch let error as RedisError where error.code == .connection {
                pause = error
            }
            if let outcome { return try outcome.get() }
            guard commands.allSatisfy(\.isReadOnly) else {
                throw RedisError(
                    code: .cluster,
                    message: "a pipeline with writes was redirected (\(commands[0].label)); send writes with pipelineBlocking")
            }
            try retry.next(after: pause ?? plan.uncoveredPause(configuration), label: commands[0].label, router: self)
        }
    }

    /// Runs each group's pipeline inside the one before, so every group's replies are alive
    /// when `finish` runs; `finish` returns nil to ask for another attempt.
    private func nest<T>(
        _ groups: ArraySlice<Plan.Group>, commands: [RedisCommand], asking: [Int: RedisClusterEndpoint],
        into replies: inout [RedisReplyReference?], _ finish: ([RedisReplyReference]) -> Result<T, any Error>?
    ) throws -> Result<T, any Error>? {
        guard let group = groups.first else { return finish(replies.map { $0! }) }
        let node = try node(group.endpoint)
        return try node.withPipelineRepliesBlocking(Self.withAsking(group.indices, commands: commands, asking: asking)) {
            groupReplies in
            for (index, position) in zip(group.indices, Self.answerPositions(group.indices, asking: asking)) {
                replies[index] = groupReplies[position]
            }
            return try nest(groups.dropFirst(), commands: commands, asking: asking, into: &replies, finish)
        }
    }

    /// Streams every master's commands at once: one thread per master reads its replies
    /// (with its own read-ahead) and hands each to the caller's thread, which runs `body` for
    /// one reply at a time. All masters prepare replies while the caller works, so a broadcast
    /// over slots on several masters uses all of them. A redirected command is run again after
    /// the rest, through the redirect-following pipeline.
    func streamRepliesBlocking(
        _ commands: [RedisCommand], costs: [Int]? = nil, budget: Int = 0,
        _ body: (_ index: Int, _ reply: RedisReplyReference) throws -> Void
    ) throws {
        let routes = try commands.map { try route($0) }
        let plan = try plan(Array(commands.indices), routes: routes, asking: [:])
        let exchange = ReplyExchange(streams: plan.groups.count)
        let done = DispatchGroup()
        for group in plan.groups {
            let node = try node(group.endpoint)
            let stream = UncheckedCommands(commands: group.indices.map { commands[$0] }, labels: commands, indices: group.indices)
            let groupCosts = costs.map { costs in group.indices.map { costs[$0] } }
            node.queue.async(group: done) {
                do {
                    try node.streamRepliesBlocking(stream.commands, costs: groupCosts, budget: budget) { position, reply, _ in
                        let index = stream.indices[position]
                        if reply.isError,
                            let error = reply.error(command: stream.labels[index].label, endpoint: group.endpoint.description),
                            Self.redirection(error) != nil
                        {
                            exchange.redirected(index)
                            return
                        }
                        try exchange.hand(index, reply)
                    }
                    exchange.finished(nil)
                } catch {
                    exchange.finished(error)
                }
            }
        }
        while let (index, reply) = exchange.next() {
            do {
                try body(index, reply)
            } catch {
                exchange.cancel()
                exchange.handled()
                done.wait()
                throw error
            }
            exchange.handled()
        }
        done.wait()
        if let error = exchange.failure {
            // Replies were handed over already, so the stream is not sent again here; the map
            // is read again so that the caller's next attempt goes to the new master.
            if let error = error as? RedisError, error.breaksConnection { trouble(error.message, seen: plan.generation) }
            throw error
        }
        for index in (plan.uncovered + exchange.redirections).sorted() {
            try withPipelineRepliesBlocking([commands[index]]) { try body(index, $0[0]) }
        }
    }

    // MARK: Plans and redirections

    /// Commands grouped by the master they go to, in caller order within each group.
    fileprivate struct Plan {
        struct Group {
            var endpoint: RedisClusterEndpoint
            var indices: [Int]
        }
        var groups: [Group] = []
        /// The generation of the slot map the plan was made with.
        var generation = 0
        /// Commands whose slot has no master right now.
        var uncovered: [Int] = []

        /// Why to wait before another attempt when some slot has no master.
        func uncoveredPause(_ configuration: RedisConfiguration) -> RedisError? {
            uncovered.isEmpty ? nil : RedisError(code: .cluster, message: "hash slot has no master (\(configuration.endpoint))")
        }
    }

    private func plan(_ indices: [Int], routes: [Route], asking: [Int: RedisClusterEndpoint]) throws -> Plan {
        let (map, generation) = try obtain(reason: "first use") { $0.current() }
        var plan = Plan()
        plan.generation = generation
        var groupOf: [RedisClusterEndpoint: Int] = [:]
        for index in indices {
            let target: RedisClusterEndpoint?
            if let asked = asking[index] {
                target = asked
            } else {
                switch routes[index] {
                case .slot(let slot): target = map.master(forSlot: slot)
                case .anyMaster, .everyMaster: target = map.masters.first
                }
            }
            guard let target else {
                plan.uncovered.append(index)
                continue
            }
            if let group = groupOf[target] {
                plan.groups[group].indices.append(index)
            } else {
                groupOf[target] = plan.groups.count
                plan.groups.append(Plan.Group(endpoint: target, indices: [index]))
            }
        }
        return plan
    }

    /// Sends each group's commands to its master as one pipeline, all masters at once when
    /// there are several.
    private func runPipelines(
        _ plan: Plan, commands: [RedisCommand], asking: [Int: RedisClusterEndpoint]
    ) -> [Result<[Result<RedisValue, RedisError>], RedisError>] {
        if plan.groups.count == 1 { return [attempt(plan.groups[0], commands: commands, asking: asking)] }
        let outcomes = OutcomeSlots<Result<[Result<RedisValue, RedisError>], RedisError>>(count: plan.groups.count)
        let done = DispatchGroup()
        let work = UncheckedPlan(plan: plan, commands: commands, asking: asking)
        for (number, group) in plan.groups.enumerated() {
            // `node` throws only once the router is closed; `attempt` reports that from any queue.
            let queue = (try? node(group.endpoint))?.queue ?? .global()
            queue.async(group: done) {
                outcomes[number] = self.attempt(work.plan.groups[number], commands: work.commands, asking: work.asking)
            }
        }
        done.wait()
        return outcomes.values
    }

    private func attempt(
        _ group: Plan.Group, commands: [RedisCommand], asking: [Int: RedisClusterEndpoint]
    ) -> Result<[Result<RedisValue, RedisError>], RedisError> {
        do {
            return .success(try node(group.endpoint).pipelineBlocking(Self.withAsking(group.indices, commands: commands, asking: asking)))
        } catch let error as RedisError {
            return .failure(error)
        } catch {
            return .failure(RedisError(code: .io, message: "\(error)"))
        }
    }

    private static func withAsking(
        _ indices: [Int], commands: [RedisCommand], asking: [Int: RedisClusterEndpoint]
    ) -> [RedisCommand] {
        guard !asking.isEmpty else { return indices.map { commands[$0] } }
        var sent: [RedisCommand] = []
        for index in indices {
            if asking[index] != nil { sent.append(RedisCommand("ASKING")) }
            sent.append(commands[index])
        }
        return sent
    }

    private static func withoutAsking(
        _ replies: [Result<RedisValue, RedisError>], indices: [Int], asking: [Int: RedisClusterEndpoint]
    ) -> [Result<RedisValue, RedisError>] {
        guard !asking.isEmpty else { return replies }
        return answerPositions(indices, asking: asking).map { replies[$0] }
    }

    /// Where each command's reply is among the replies of `withAsking(indices, ...)`: one
    /// further on for each `ASKING` sent before it.
    private static func answerPositions(_ indices: [Int], asking: [Int: RedisClusterEndpoint]) -> [Int] {
        var position = -1
        return indices.map { index in
            position += asking[index] != nil ? 2 : 1
            return position
        }
    }

    private static func redirection(_ error: RedisError) -> RedisClusterRedirection? {
        guard error.code == .server, let prefix = error.serverPrefix,
            ["MOVED", "ASK", "TRYAGAIN", "CLUSTERDOWN", "LOADING", "MASTERDOWN"].contains(prefix)
        else { return nil }
        if prefix == "MASTERDOWN" { return .retryLater(reason: prefix) }
        return RedisClusterRedirection(errorReply: error.message.split(separator: " ").prefix(3).joined(separator: " "))
    }

    /// Applies a redirection for command `index`; true when the command must wait before it
    /// is sent again (`TRYAGAIN` and its kin), false when it can go at once (`MOVED`, `ASK`).
    private func follow(_ redirection: RedisClusterRedirection, index: Int, asking: inout [Int: RedisClusterEndpoint]) -> Bool {
        switch redirection {
        case .moved(let slot, let endpoint):
            topologyLock.withLock { topology.moved(slot: slot, to: endpoint) }
            asking[index] = nil
            lock.withLock { counters.moved += 1 }
            return false
        case .ask(_, let endpoint):
            asking[index] = endpoint
            lock.withLock { counters.asked += 1 }
            return false
        case .retryLater:
            asking[index] = nil
            lock.withLock { counters.clusterRetries += 1 }
            return true
        }
    }

    /// How long a call may keep retrying, and how many rounds of redirections it may follow.
    private struct RetryBudget {
        let deadline: ContinuousClock.Instant
        let seconds: Double
        let maximumRedirects: Int
        var redirects = 0
        var pauses = 0
        /// The generation of the slot map of the last attempt: a pause reads a newer one.
        var generation = 0

        init(configuration: RedisConfiguration) {
            seconds = configuration.clusterRetrySeconds
            deadline = .now + .milliseconds(Int(configuration.clusterRetrySeconds * 1000))
            maximumRedirects = configuration.maximumRedirects
        }

        /// Before another round: counts a redirection, or pauses (re-reading the slot map) for
        /// a retryable error; throws once the budget is spent. A pause starts a new count of
        /// redirections: during a migration a script is asked, told to try again, asked again.
        mutating func next(after pause: RedisError?, label: String, router: RedisClusterRouter) throws {
            guard let pause else {
                redirects += 1
                if redirects > maximumRedirects {
                    throw RedisError(code: .cluster, message: "\(label): more than \(maximumRedirects) redirections in a row")
                }
                return
            }
            if ContinuousClock.now >= deadline {
                throw RedisError(
                    code: .cluster,
                    message: "\(pause.message) (gave up after \(pauses) retries over \(seconds) s)",
                    serverPrefix: pause.serverPrefix)
            }
            let milliseconds = min(500, 10 << min(pauses, 6))
            pauses += 1
            redirects = 0
            usleep(UInt32(milliseconds * 1000))
            if pause.code != .server || pause.serverPrefix == "CLUSTERDOWN" { router.trouble(pause.message, seen: generation) }
        }
    }
}

/// A pipeline's plan, handed to the masters' queues.
private struct UncheckedPlan: @unchecked Sendable {
    let plan: RedisClusterRouter.Plan
    let commands: [RedisCommand]
    let asking: [Int: RedisClusterEndpoint]
}

/// One master's part of a stream, handed to its reading thread.
private struct UncheckedCommands: @unchecked Sendable {
    let commands: [RedisCommand]
    let labels: [RedisCommand]
    let indices: [Int]
}

/// Hands replies from the masters' reading threads to the caller's thread, one at a time: a
/// reading thread waits until the caller has handled its reply (the reply is freed when the
/// reading thread goes on), while the other masters keep preparing theirs.
final class ReplyExchange: @unchecked Sendable {
    private let condition = NSCondition()
    private var waiting: [(index: Int, reply: RedisReplyReference)] = []
    private var inHand = false
    private var handledCount = 0
    private var running: Int
    private var cancelled = false
    private(set) var failure: (any Error)?
    private(set) var redirections: [Int] = []

    init(streams: Int) { running = streams }

    /// Reading thread: offers a reply and waits until the caller has handled it. When the
    /// exchange is cancelled (the caller's body failed, or another master's stream did), a
    /// reply the caller has not taken is withdrawn, and one it has taken is waited for: the
    /// reading thread frees its replies when it returns, and the caller may be reading this one.
    func hand(_ index: Int, _ reply: RedisReplyReference) throws {
        condition.lock()
        defer { condition.unlock() }
        guard !cancelled else { throw CancellationError() }
        waiting.append((index, reply))
        let ticket = handledCount + waiting.count + (inHand ? 1 : 0)
        condition.broadcast()
        while handledCount < ticket {
            if cancelled, handledCount + (inHand ? 1 : 0) < ticket {
                waiting.removeAll { $0.index == index }
                throw CancellationError()
            }
            condition.wait()
        }
    }

    func redirected(_ index: Int) {
        condition.lock()
        redirections.append(index)
        condition.unlock()
    }

    /// Reading thread: its stream ended (with the error that ended it, if any).
    func finished(_ error: (any Error)?) {
        condition.lock()
        running -= 1
        if let error, failure == nil, !(error is CancellationError) {
            failure = error
            cancelled = true
        }
        condition.broadcast()
        condition.unlock()
    }

    /// Caller: the next reply, or nil once every stream has ended (or one failed).
    func next() -> (Int, RedisReplyReference)? {
        condition.lock()
        defer { condition.unlock() }
        while waiting.isEmpty, running > 0, !cancelled { condition.wait() }
        guard !cancelled, !waiting.isEmpty else { return nil }
        inHand = true
        let entry = waiting.removeFirst()
        return (entry.index, entry.reply)
    }

    /// Caller: done with the reply `next` returned.
    func handled() {
        condition.lock()
        inHand = false
        handledCount += 1
        condition.broadcast()
        condition.unlock()
    }

    /// Caller: stop every stream (its body failed).
    func cancel() {
        condition.lock()
        cancelled = true
        condition.broadcast()
        condition.unlock()
    }
}

/// Results written by concurrent iterations, one slot each.
private final class OutcomeSlots<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var slots: [Value?]

    init(count: Int) { slots = Array(repeating: nil, count: count) }

    subscript(index: Int) -> Value? {
        get { lock.withLock { slots[index] } }
        set { lock.withLock { slots[index] = newValue } }
    }

    var values: [Value] { lock.withLock { slots.map { $0! } } }
}
