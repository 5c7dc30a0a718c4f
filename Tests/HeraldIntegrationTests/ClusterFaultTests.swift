import Foundation
import HeraldApp
import HeraldDomain
import HeraldKafka
import HeraldLocalPush
import HeraldPipeline
import HeraldRedis
import HeraldRegistry
import HeraldStreams
import HeraldTestSupport
import Testing

/// Fault suite on a 3+3 Redis Cluster: hash slots resharded while a broadcast runs, and a
/// master killed during one. A worker process (planner, fan-out, indexer) builds the index
/// from the log and delivers; the test plays the operator with `redis-cli`.
@Suite(
    "Redis Cluster faults under a live broadcast", .heavy, .serialized,
    .enabled(if: HeraldBinary.isBuilt, "build the herald executable first"),
    .enabled(if: TestRedisCluster.suitesEnabled, "runs in make test's cluster pass"))
struct ClusterFaultTests {
    static let slots = 256

    /// A cluster, a broker, the audience on the log and a worker that has indexed it.
    struct Deployment {
        let cluster: TestRedisCluster
        let broker: TestBroker
        let prefix: String
        let layout: SlotLayout
        let topics: HeraldTopics
        let registry: RegistryConfiguration
        let environment: [String: String]
        let pool: RedisConnectionPool
        let worker: HeraldBinary.Running

        init(
            name: String, registrations: Int, roles: String = "planner,fanout,indexer", extraEnvironment: [String: String] = [:]
        ) async throws {
            cluster = try TestRedisCluster()
            broker = try TestBroker()
            prefix = TestBroker.uniqueName(name)
            layout = SlotLayout(slotCount: ClusterFaultTests.slots, prefix: prefix)
            topics = HeraldTopics.prefixed(prefix)
            var registry = RegistryConfiguration()
            registry.registrationsTopic = prefix + ".herald.registrations"
            registry.slotCount = ClusterFaultTests.slots
            registry.redisPrefix = prefix
            self.registry = registry
            try await RedisLossTests.seedLog(registry, broker: broker, count: registrations)
            environment = [
                "HERALD_KAFKA_BROKERS": broker.bootstrapServers, "HERALD_REDIS_URL": cluster.url,
                "HERALD_TOPIC_PREFIX": prefix + ".herald.", "HERALD_REDIS_PREFIX": prefix,
                "HERALD_SLOTS": String(ClusterFaultTests.slots), "HERALD_TASKS_PER_BROADCAST": "32", "HERALD_INSTANCE_ID": prefix,
                "HERALD_SESSION_TIMEOUT_MS": String(TestBroker.sessionTimeoutMs), "HERALD_METRICS_PORT": "0", "HERALD_ROLES": roles,
                "HERALD_LOG_LEVEL": "notice", "HERALD_ALLOW_DEMO_KEYS": "true",
            ].merging(extraEnvironment) { $1 }
            worker = try HeraldBinary.start(["worker"], environment: environment)
            pool = RedisConnectionPool(configuration: try RedisConfiguration(url: cluster.url), size: 2)
            try await RedisLossTests.waitForEpoch(RegistrationIndex(pool: pool, layout: layout), worker: worker)
            try await ExactlyOnceTests.waitForTopic(topics.deliveries, bootstrapServers: broker.bootstrapServers, timeout: .seconds(60))
        }

        func stop() {
            worker.signal(SIGTERM)
            _ = worker.waitForExit(timeout: 40)
            pool.shutdown()
            broker.stop()
        }

        /// A broadcast now, or at `sendAt`.
        func publish(_ eventId: String, sendAt: Date? = nil) async throws {
            let publisher = try EventPublisher(bootstrapServers: broker.bootstrapServers, topics: topics)
            let schedule = sendAt.map { #","sendAt":"\#(ISO8601Timestamp.format($0))""# } ?? ""
            let event = try NotificationEvent.decode(
                Array(#"{"id":"\#(eventId)","properties":{"News_English":"Summit ends"}\#(schedule)}"#.utf8))
            do {
                _ = try await publisher.publish(event)
            } catch {
                await publisher.shutdown()
                throw error
            }
            await publisher.shutdown()
        }

        /// Waits for the status to complete and checks it and the delivery log: every
        /// deliveryId present, nothing else, duplicates only as the broker allows.
        func expectDelivered(_ eventId: String, registrations: Int) async throws {
            let status = try await RedisLossTests.waitForCompletion(
                eventId, reader: StatusReader(pool: pool, layout: layout), worker: worker)
            #expect(status.targets.total == registrations)
            #expect(status.tasks.completed == status.tasks.planned)
            let copies = try await RedisLossTests.deliveryCopies(eventId: eventId, topic: topics.deliveries, broker: broker)
            let expected = Set((0..<registrations).map { "\(eventId)/rl\($0)/news" })
            let missing = expected.subtracting(copies.keys)
            #expect(missing.isEmpty, "lost \(missing.count) deliveries, e.g. \(missing.prefix(3))")
            #expect(Set(copies.keys).isSubset(of: expected))
            let duplicated = copies.filter { $0.value > 1 }
            if broker.isExternal {
                #expect(duplicated.isEmpty, "\(duplicated.count) deliveries appear more than once")
            } else {
                // Tansu shows aborted transactions to read_committed readers (ExactlyOnceTests).
                #expect(duplicated.values.allSatisfy { $0 == 2 })
            }
        }
    }

    /// 30,000 devices by default (HERALD_FAULT_CLUSTER_REGISTRATIONS): the broadcast is published
    /// once the first slot has moved, so it runs into the reshard however fast either goes.
    @Test("a third of the hash slots resharded during a broadcast: every delivery, exact status")
    func reshardDuringBroadcast() async throws {
        let registrations = Int(ProcessInfo.processInfo.environment["HERALD_FAULT_CLUSTER_REGISTRATIONS"] ?? "") ?? 30_000
        let deployment = try await Deployment(name: "reshard", registrations: registrations)
        defer { deployment.stop() }
        let cluster = deployment.cluster
        let masters = try cluster.masters()
        try #require(masters.count == 3)
        let initial = try #require(try cluster.nodes().first { $0.port == masters[0] }).slots.reduce(0) { $0 + $1.count }

        // Two reshards of 2731 slots each (a third of 16384), one master to the next, as an
        // operator runs them; the broadcast is published once the first slots have moved.
        let reshard = Task.detached {
            try cluster.reshard(from: masters[0], to: masters[1], count: 2_731)
            try cluster.reshard(from: masters[1], to: masters[2], count: 2_731)
        }
        let firstMoved = try #require(try cluster.nodes().first { $0.port == masters[0] }?.slots.first?.lowerBound)
        try waitUntil(timeout: 60, "the reshard to move its first slot") {
            (try? cluster.master(ofSlot: firstMoved)) != masters[0]
        }
        let eventId = deployment.prefix + "-broadcast"
        try await deployment.publish(eventId)
        let reshardWasRunning = await !Self.isFinished(reshard)
        try await reshard.value
        #expect(reshardWasRunning, "the reshard ended before the broadcast was published; make the audience larger")

        try await deployment.expectDelivered(eventId, registrations: registrations)
        #expect(try cluster.isConsistent())
        let remaining = try #require(try cluster.nodes().first { $0.port == masters[0] }).slots.reduce(0) { $0 + $1.count }
        #expect(remaining == initial - 2_731)
    }

    @Test(
        "kill -9 of each master in turn, each during a broadcast, the first with a schedule falling due: a replica takes over each time, the worker keeps running, every broadcast and the release complete, reindex --node makes the cache equal the log"
    )
    func failoverDuringBroadcast() async throws {
        let registrations = Int(ProcessInfo.processInfo.environment["HERALD_FAULT_CLUSTER_FAILOVER_REGISTRATIONS"] ?? "") ?? 20_000
        let deployment = try await Deployment(name: "failover", registrations: registrations, roles: "planner,fanout,indexer,scheduler")
        defer { deployment.stop() }
        let cluster = deployment.cluster
        let scheduledId = deployment.prefix + "-scheduled"
        var promoted: [Int] = []
        for (round, victim) in try cluster.masters().enumerated() {
            let eventId = deployment.prefix + "-broadcast-\(round)"
            let watcher = try await DeliveryWatcher(
                bootstrapServers: deployment.broker.bootstrapServers, topic: deployment.topics.deliveries)
            if round == 0 {
                // Due while the master is down or just promoted: the scheduler polls its due
                // index on every master the whole time (a killed master once ended the worker
                // from there).
                try await deployment.publish(scheduledId, sendAt: Date().addingTimeInterval(20))
            }
            try await deployment.publish(eventId)
            _ = try await watcher.wait(forAtLeast: registrations / 5, of: eventId)

            let victimSlot = try #require(try cluster.nodes().first { $0.port == victim }?.slots.first?.lowerBound)
            try cluster.kill(victim)
            try waitUntil(timeout: 30, "a replica to take over from the killed master") {
                guard let owner = try? cluster.master(ofSlot: victimSlot) else { return false }
                return owner != victim
            }
            try cluster.waitUntilHealthy(except: [victim])
            promoted.append(try #require(try cluster.master(ofSlot: victimSlot)))
            try await deployment.expectDelivered(eventId, registrations: registrations)
            #expect(deployment.worker.process.isRunning, "the worker exited: \(deployment.worker.crashHead())")
            // The killed node comes back as a replica, so the next master killed has one too.
            try cluster.restart(victim)
            try cluster.waitUntilHealthy()
        }
        try await deployment.expectDelivered(scheduledId, registrations: registrations)
        #expect(deployment.worker.process.isRunning, "the worker exited: \(deployment.worker.stderr().suffix(2_000))")

        // Writes acknowledged by a dead master but not yet replicated are repaired from the
        // log, for the Herald slots its replica took over.
        for node in promoted {
            let reindex = try HeraldBinary.run(
                ["reindex", "--node", "127.0.0.1:\(node)"], environment: deployment.environment, timeout: 300)
            #expect(reindex.status == 0, "\(reindex.stderr.suffix(2_000))")
            let scoped = reindex.stdout.split(separator: "\n").first { $0.hasPrefix("slots") }.map(String.init) ?? ""
            #expect(scoped.hasSuffix("of \(Self.slots)") && !scoped.contains(" 0 of"), "\(reindex.stdout)")
        }
        try await RedisLossTests.expectEqualToRebuild(
            RegistrationIndex(pool: deployment.pool, layout: deployment.layout), registry: deployment.registry,
            topics: deployment.topics, broker: deployment.broker)
    }

    @Test(
        "kill -9 of a master while the sender commits receipts and the API takes registrations: both keep running, every delivery gets its final receipt, every acknowledged write is readable after"
    )
    func failoverUnderSenderAndAPI() async throws {
        let registrations = Int(ProcessInfo.processInfo.environment["HERALD_FAULT_CLUSTER_SENDER_REGISTRATIONS"] ?? "") ?? 10_000
        let push = try await LocalPushServices.start()
        let base = URL(string: "http://127.0.0.1:\(freeLocalPort())/")!
        let policy = (name: "Full", key: "full-key-for-the-cluster-fault-tests-0001")
        let deployment = try await Deployment(
            name: "sendfo", registrations: registrations, roles: "planner,fanout,indexer,sender",
            extraEnvironment: push.environment.merging([
                "HERALD_API_HOST": "127.0.0.1", "HERALD_API_PORT": String(base.port!), "HERALD_HUB_URI": base.absoluteString,
                "HERALD_POLICIES": "\(policy.name):listen+send+manage:\(policy.key)",
                "HERALD_ID_SECRET": "id-secret-for-the-cluster-fault-tests-01",
            ]) { $1 })
        let api = try HeraldBinary.start(["api"], environment: deployment.environment)
        defer {
            api.signal(SIGTERM)
            _ = api.waitForExit(timeout: 20)
            deployment.stop()
        }
        let client = HeraldHTTPClient.signed(base, policy)
        try await client.waitUntilReady(attempts: 1_200) { api.stderr().suffix(2_000).description }

        // The victim is the master that holds both the index epoch (which readiness reads) and
        // the broadcast's sent-markers (which the sender writes with every receipt it commits):
        // the event id is picked so that both keys live there.
        let cluster = deployment.cluster
        let layout = deployment.layout
        func master(of key: String) -> Int? { try? cluster.master(ofSlot: RedisClusterSlot.of(Array(key.utf8))) }
        let victim = try #require(master(of: layout.metaKey))
        let eventId = try #require(
            (0..<300).lazy.map { "\(deployment.prefix)-broadcast-\($0)" }.first { master(of: layout.sentMarkersKey(eventId: $0)) == victim }
        )
        let receipts = try await DeliveryWatcher(bootstrapServers: deployment.broker.bootstrapServers, topic: deployment.topics.receipts)
        try await deployment.publish(eventId)
        _ = try await receipts.wait(forAtLeast: registrations / 5)

        // Registrations written one after another from before the kill until well after the
        // replica took over; each answer is kept.
        let writer = RegistrationWriter(client: client)
        let writing = Task { await writer.run() }
        // The API's readiness is asked all along. While the master holding the index epoch is
        // down it says so (503 after its own two-second limit) instead of hanging until the
        // replica takes over and then saying ready.
        let probing = Task {
            var answers: [Int: Int] = [:]
            while !Task.isCancelled {
                let status = (try? await client.send("GET", "/health/ready", timeout: 30))?.status ?? 0
                // A probe cut short by the cancel below is no answer from the API.
                if Task.isCancelled { break }
                answers[status, default: 0] += 1
                try? await Task.sleep(for: .milliseconds(250))
            }
            return answers
        }
        try await writer.waitForAcknowledged(5)
        let victimSlot = RedisClusterSlot.of(Array(layout.metaKey.utf8))
        try cluster.kill(victim)
        let receiptsAtKill = try await Self.receiptsNow(of: eventId, deployment: deployment).count
        #expect(receiptsAtKill < registrations, "the sender was done before the kill; make the audience larger")
        try waitUntil(timeout: 30, "a replica to take over from the killed master") {
            guard let owner = try? cluster.master(ofSlot: victimSlot) else { return false }
            return owner != victim
        }
        try cluster.waitUntilHealthy(except: [victim])
        let before = await writer.acknowledged.count
        try await writer.waitForAcknowledged(before + 20)
        await writer.stop()
        _ = await writing.value
        probing.cancel()
        let readiness = await probing.value
        #expect(Set(readiness.keys).isSubset(of: [200, 503]), "\(readiness)")
        #expect(readiness[503, default: 0] >= 1, "readiness never reported the dead master: \(readiness)")

        try await deployment.expectDelivered(eventId, registrations: registrations)
        let final = try await Self.receipts(of: eventId, count: registrations, deployment: deployment)
        #expect(final.count == registrations)
        #expect(
            final.values.allSatisfy { $0.allSatisfy { $0.outcome == .sent } },
            "\(final.values.first { $0.contains { $0.outcome != .sent } } ?? [])")
        #expect(
            deployment.worker.process.isRunning,
            "the worker exited: \(deployment.worker.crashHead())\n\(deployment.worker.stderr().suffix(2_000))")
        #expect(api.process.isRunning, "the API exited: \(api.crashHead())\n\(api.stderr().suffix(2_000))")

        // Every answer was an acknowledgement or a 503 that says why; every acknowledged
        // registration reads back.
        let answers = await writer.answers
        let unexpected = answers.filter { ![200, 201, 503].contains($0.status) || ($0.status == 503 && $0.body.isEmpty) }
        #expect(unexpected.isEmpty, "\(unexpected.prefix(3))")
        for id in await writer.acknowledged {
            let reply = try await client.send("GET", "/v1/registrations/\(id)")
            #expect(reply.status == 200, "\(id): \(reply.status) \(reply.text)")
        }
        await push.shutdown()
        print(
            "sender and API under a master kill: \(receiptsAtKill) of \(registrations) receipts at the kill; \(answers.count) writes, \(answers.filter { $0.status == 503 }.count) answered 503; readiness answers \(readiness)"
        )
    }

    /// The receipts of `eventId`, once every one of `count` deliveries has one; fails only when
    /// no new receipt arrives for two minutes.
    static func receipts(of eventId: String, count: Int, deployment: Deployment) async throws -> [String: [PushReceipt]] {
        try await waitWhileProgressing("\(count) receipts of \(eventId)", stallLimit: .seconds(120), interval: .milliseconds(500)) {
            () async throws -> ProgressCheck<Int, [String: [PushReceipt]]> in
            let found = try await receiptsNow(of: eventId, deployment: deployment)
            return found.count >= count ? .done(found) : .waiting(found.count)
        }
    }

    /// The receipts of `eventId` committed so far, by delivery.
    static func receiptsNow(of eventId: String, deployment: Deployment) async throws -> [String: [PushReceipt]] {
        var found: [String: [PushReceipt]] = [:]
        var tail = RecordTail(topic: deployment.topics.receipts, bootstrapServers: deployment.broker.bootstrapServers)
        tail.eventId = eventId
        for try await message in tail.records() {
            guard let value = message.value else { continue }
            let receipt = try JSONDecoder().decode(PushReceipt.self, from: Data(value))
            found[receipt.deliveryId, default: []].append(receipt)
        }
        return found
    }

    private static func isFinished(_ task: Task<Void, any Error>) async -> Bool {
        // A task's result is only observable by awaiting it; race it against a short sleep.
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                _ = await task.result
                return true
            }
            group.addTask {
                try? await Task.sleep(for: .milliseconds(50))
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }
}

/// Growing a deployment, as docs/operations.md tells it: from one Redis to a cluster with
/// `herald reindex`, then to more Herald slots under a new prefix, nothing lost on the way.
@Suite(
    "Growing onto a Redis Cluster", .heavy, .enabled(if: HeraldBinary.isBuilt, "build the herald executable first"),
    .enabled(if: TestRedisCluster.suitesEnabled, "runs in make test's cluster pass"))
struct ClusterGrowthTests {
    @Test("one Redis → a 3+3 cluster → twice the slots: every registration indexed, the cluster equal to the log")
    func singleToClusterToMoreSlots() async throws {
        let registrations = 5_000
        let single = try TestRedis()
        let cluster = try TestRedisCluster()
        let broker = try TestBroker()
        defer { broker.stop() }
        let prefix = TestBroker.uniqueName("grow")
        var registry = RegistryConfiguration()
        registry.registrationsTopic = prefix + ".herald.registrations"
        registry.slotCount = 64
        registry.redisPrefix = prefix
        try await RedisLossTests.seedLog(registry, broker: broker, count: registrations)
        let base = [
            "HERALD_KAFKA_BROKERS": broker.bootstrapServers, "HERALD_TOPIC_PREFIX": prefix + ".herald.",
            "HERALD_REDIS_PREFIX": prefix, "HERALD_SLOTS": "64", "HERALD_ALLOW_DEMO_KEYS": "true",
        ]
        let topics = try HeraldBinary.run(["topics", "create"], environment: base, timeout: 120)
        #expect(topics.status == 0, "\(topics.stderr.suffix(1_500))")
        for url in [single.url, cluster.url] {
            let run = try HeraldBinary.run(["reindex"], environment: base.merging(["HERALD_REDIS_URL": url]) { $1 }, timeout: 300)
            #expect(run.status == 0, "\(url): \(run.stderr.suffix(1_500))")
        }
        let layout = SlotLayout(slotCount: 64, prefix: prefix)
        let singlePool = RedisConnectionPool(configuration: try RedisConfiguration(url: single.url), size: 2)
        let clusterPool = RedisConnectionPool(configuration: try RedisConfiguration(url: cluster.url), size: 2)
        defer {
            singlePool.shutdown()
            clusterPool.shutdown()
        }
        let before = try await RegistrationIndex(pool: singlePool, layout: layout).digest()
        let after = try await RegistrationIndex(pool: clusterPool, layout: layout).digest()
        #expect(before.keyCount > registrations)
        #expect(after == before)

        // More slots: a new prefix with HERALD_SLOTS=128, rebuilt from the same log.
        let grown = prefix + "-128"
        let run = try HeraldBinary.run(
            ["reindex"],
            environment: base.merging(["HERALD_REDIS_URL": cluster.url, "HERALD_REDIS_PREFIX": grown, "HERALD_SLOTS": "128"]) { $1 },
            timeout: 300)
        #expect(run.status == 0, "\(run.stderr.suffix(1_500))")
        let grownLayout = SlotLayout(slotCount: 128, prefix: grown)
        let sizes = try await clusterPool.withConnection { connection in
            try await connection.pipeline((0..<128).map { .scard(grownLayout.allKey(slot: $0)) })
        }
        #expect(try sizes.reduce(0) { $0 + (try $1.get().int ?? 0) } == registrations)
    }
}

/// Writes registrations through the API one after another until stopped, keeping every answer.
actor RegistrationWriter {
    struct Answer: CustomStringConvertible {
        var id: String
        var status: Int
        var body: String
        var description: String { "\(id): \(status) \(body.prefix(200))" }
    }

    let client: HeraldHTTPClient
    private(set) var answers: [Answer] = []
    private(set) var acknowledged: [String] = []
    private var stopped = false

    init(client: HeraldHTTPClient) { self.client = client }

    func run() async {
        var number = 0
        while !stopped {
            number += 1
            do {
                let created = try await client.send("POST", "/v1/registrationIDs")
                guard created.status == 201, let id = created.header("Location")?.split(separator: "/").last.map(String.init) else {
                    answers.append(Answer(id: "registrationIDs", status: created.status, body: created.text))
                    continue
                }
                let handle = String(format: "%064x", number)
                let body =
                    #"{"platform":"apns","handle":"\#(handle)","tags":["Writes"],"template":{"name":"news","body":"{\"aps\":{\"alert\":\"$(News_English)\"}}"}}"#
                let reply = try await client.send("PUT", "/v1/registrations/\(id)", body: Data(body.utf8))
                answers.append(Answer(id: id, status: reply.status, body: reply.text))
                if reply.status == 200 || reply.status == 201 { acknowledged.append(id) }
            } catch {
                answers.append(Answer(id: "write \(number)", status: 0, body: "\(error)"))
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    func stop() { stopped = true }

    /// Waits until `count` writes were acknowledged; fails only when none is for two minutes.
    nonisolated func waitForAcknowledged(_ count: Int) async throws {
        _ = try await waitWhileProgressing("\(count) acknowledged writes", stallLimit: .seconds(120), interval: .milliseconds(100)) {
            () async throws -> ProgressCheck<Int, Int> in
            let now = await self.acknowledged.count
            return now >= count ? .done(now) : .waiting(now)
        }
    }
}
