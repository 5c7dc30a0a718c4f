import Foundation
import HeraldDomain
import HeraldKafka
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

        init(name: String, registrations: Int, roles: String = "planner,fanout,indexer") async throws {
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
                "HERALD_SESSION_TIMEOUT_MS": "6000", "HERALD_METRICS_PORT": "0", "HERALD_ROLES": roles,
                "HERALD_LOG_LEVEL": "notice", "HERALD_ALLOW_DEMO_KEYS": "true",
            ]
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
            _ = try await publisher.publish(
                try NotificationEvent.decode(
                    Array(#"{"id":"\#(eventId)","properties":{"News_English":"Summit ends"}\#(schedule)}"#.utf8)))
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

    @Test("a third of the hash slots resharded during a 200,000-device broadcast: every delivery, exact status")
    func reshardDuringBroadcast() async throws {
        let registrations = Int(ProcessInfo.processInfo.environment["HERALD_FAULT_CLUSTER_REGISTRATIONS"] ?? "") ?? 200_000
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
        "kill -9 of a master mid-broadcast with a schedule falling due: its replica takes over, the worker keeps running, the broadcast and the release complete, reindex --node makes the cache equal the log"
    )
    func failoverDuringBroadcast() async throws {
        let registrations = Int(ProcessInfo.processInfo.environment["HERALD_FAULT_CLUSTER_FAILOVER_REGISTRATIONS"] ?? "") ?? 60_000
        let deployment = try await Deployment(name: "failover", registrations: registrations, roles: "planner,fanout,indexer,scheduler")
        defer { deployment.stop() }
        let cluster = deployment.cluster
        let eventId = deployment.prefix + "-broadcast"
        let scheduledId = deployment.prefix + "-scheduled"
        let watcher = try await DeliveryWatcher(bootstrapServers: deployment.broker.bootstrapServers, topic: deployment.topics.deliveries)
        // Due while the master is down or just promoted: the scheduler polls its due index on
        // every master the whole time (a killed master once ended the worker from there).
        try await deployment.publish(scheduledId, sendAt: Date().addingTimeInterval(20))
        try await deployment.publish(eventId)
        _ = try await watcher.wait(forAtLeast: registrations / 5)

        let victim = try cluster.masters()[1]
        let victimSlot = try #require(try cluster.nodes().first { $0.port == victim }?.slots.first?.lowerBound)
        try cluster.kill(victim)
        try waitUntil(timeout: 30, "a replica to take over from the killed master") {
            guard let owner = try? cluster.master(ofSlot: victimSlot) else { return false }
            return owner != victim
        }
        try cluster.waitUntilHealthy(except: [victim])
        let promoted = try #require(try cluster.master(ofSlot: victimSlot))

        try await deployment.expectDelivered(eventId, registrations: registrations)
        try await deployment.expectDelivered(scheduledId, registrations: registrations)
        #expect(deployment.worker.process.isRunning, "the worker exited: \(deployment.worker.stderr().suffix(2_000))")

        // Writes acknowledged by the dead master but not yet replicated are repaired from the
        // log, for the Herald slots its replica took over.
        let reindex = try HeraldBinary.run(
            ["reindex", "--node", "127.0.0.1:\(promoted)"], environment: deployment.environment, timeout: 300)
        #expect(reindex.status == 0, "\(reindex.stderr.suffix(2_000))")
        let scoped = reindex.stdout.split(separator: "\n").first { $0.hasPrefix("slots") }.map(String.init) ?? ""
        #expect(scoped.hasSuffix("of \(Self.slots)") && !scoped.contains(" 0 of"), "\(reindex.stdout)")
        try await RedisLossTests.expectEqualToRebuild(
            RegistrationIndex(pool: deployment.pool, layout: deployment.layout), registry: deployment.registry,
            topics: deployment.topics, broker: deployment.broker)
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
