import Foundation
import HeraldDomain
import HeraldKafka
import HeraldPipeline
import HeraldRedis
import HeraldRegistry
import HeraldTestSupport
import Testing
import HeraldStreams

/// Fault suite: Redis loses everything in the middle of a broadcast, once by FLUSHALL and
/// once by a restart of a server that persists nothing. The worker (planner, fan-out and
/// indexer roles) must notice, rebuild Redis from the log by itself, and finish both
/// broadcasts with every deliveryId present and exact statuses; afterwards the index, the
/// statuses and the claims equal what a fresh rebuild from the log produces.
///
/// `make test` runs it over 15,000 registrations; HERALD_FAULT_REDIS_REGISTRATIONS sets the size.
@Suite("Redis flushed and restarted across broadcasts", .heavy, .enabled(if: HeraldBinary.isBuilt, "build the herald executable first"))
struct RedisLossTests {
    static let registrations = Int(ProcessInfo.processInfo.environment["HERALD_FAULT_REDIS_REGISTRATIONS"] ?? "") ?? 15_000

    @Test("FLUSHALL and an empty restart mid-broadcast: rebuilt from the log, nothing lost, statuses exact")
    func redisLostMidBroadcast() async throws {
        let redis = try TestRedis()
        let broker = try TestBroker()
        defer {
            broker.stop()
            redis.stop()
        }
        try #require(redis.canRestart, "needs a Redis of its own (HERALD_TEST_REDIS_URL is set)")
        let prefix = TestBroker.uniqueName("loss")
        let slots = 64
        let layout = SlotLayout(slotCount: slots, prefix: prefix)
        let topics = HeraldTopics.prefixed(prefix)
        var registry = RegistryConfiguration()
        registry.registrationsTopic = prefix + ".herald.registrations"
        registry.slotCount = slots
        registry.redisPrefix = prefix
        try await Self.seedLog(registry, broker: broker)

        let environment = [
            "HERALD_KAFKA_BROKERS": broker.bootstrapServers, "HERALD_REDIS_URL": redis.url,
            "HERALD_TOPIC_PREFIX": prefix + ".herald.", "HERALD_REDIS_PREFIX": prefix, "HERALD_SLOTS": String(slots),
            // 60 small tasks: the broadcast spans several commits, so the loss meets work in progress.
            "HERALD_TASKS_PER_BROADCAST": "64", "HERALD_DELIVERIES_PER_TASK": "500", "HERALD_INSTANCE_ID": prefix,
            "HERALD_SESSION_TIMEOUT_MS": String(TestBroker.stoppedWorkerSessionTimeoutMs), "HERALD_METRICS_PORT": "0",
            "HERALD_ROLES": "planner,fanout,indexer",
            "HERALD_LOG_LEVEL": "notice",
        ]
        let worker = try HeraldBinary.start(["worker"], environment: environment)
        defer {
            worker.signal(SIGCONT)
            worker.signal(SIGTERM)
            _ = worker.waitForExit(timeout: 40)
        }
        let pool = RedisConnectionPool(configuration: try RedisConfiguration(url: redis.url), size: 2)
        defer { pool.shutdown() }
        let index = RegistrationIndex(pool: pool, layout: layout)
        // A new deployment has no index: the worker builds it from the log before planning.
        try await Self.waitForEpoch(index, worker: worker)
        try await ExactlyOnceTests.waitForTopic(topics.deliveries, bootstrapServers: broker.bootstrapServers, timeout: .seconds(60))

        let publisher = try EventPublisher(bootstrapServers: broker.bootstrapServers, topics: topics)
        let statusReader = StatusReader(pool: pool, layout: layout)
        for (name, loseRedis) in [
            ("flush", { _ = try await pool.withConnection { try await $0.send(RedisCommand("FLUSHALL")) } }),
            ("restart", { try redis.restart() }),
        ] as [(String, () async throws -> Void)] {
            // The worker runs in short slices from the publish on and stands still as soon as
            // the planner's status appears; Redis is lost while it stands still, and it goes on.
            let eventId = "\(prefix)-\(name)"
            worker.signal(SIGSTOP)
            _ = try await publisher.publish(
                try NotificationEvent.decode(Array(#"{"id":"\#(eventId)","properties":{"News_English":"Summit ends"}}"#.utf8)))
            try await worker.runInSlices(of: .milliseconds(10), timeout: .seconds(60)) {
                try await statusReader.status(eventId: eventId) != nil
            }
            let completedEarly = try await statusReader.status(eventId: eventId)?.state == .completed
            try await loseRedis()
            worker.signal(SIGCONT)
            #expect(!completedEarly, "the \(name) broadcast completed before Redis was lost; make it larger")

            let status = try await Self.waitForCompletion(eventId, reader: statusReader, worker: worker)
            #expect(status.targets.total == Self.registrations, "\(name): \(status.targets.total) targets")
            #expect(status.tasks.completed == status.tasks.planned)
            let copies = try await Self.deliveryCopies(eventId: eventId, topic: topics.deliveries, broker: broker)
            let expected = Set((0..<Self.registrations).map { "\(eventId)/rl\($0)/news" })
            let missing = expected.subtracting(copies.keys)
            #expect(missing.isEmpty, "\(name): lost \(missing.count) deliveries, e.g. \(missing.prefix(3))")
            #expect(Set(copies.keys).isSubset(of: expected))
            let duplicates = copies.values.reduce(0) { $0 + $1 - 1 }
            print("Redis lost by \(name) mid-broadcast: \(Self.registrations) deliveries, nothing lost, \(duplicates) duplicate records")
        }

        let rebuilds = worker.stderr().components(separatedBy: "registration index rebuilt from the log").count - 1
        #expect(rebuilds >= 3, "the worker rebuilt the index \(rebuilds) times (new deployment, flush, restart)")

        // The cache equals the log: a second Redis rebuilt from scratch holds the same index,
        // statuses and claims.
        try await Self.expectEqualToRebuild(index, registry: registry, topics: topics, broker: broker)
        await publisher.shutdown()
    }

    /// Rebuilds the index, statuses and claims from the log into a fresh single Redis and
    /// expects `index` to hold the same log state, key by key.
    static func expectEqualToRebuild(
        _ index: RegistrationIndex, registry: RegistryConfiguration, topics: HeraldTopics, broker: TestBroker
    ) async throws {
        let layout = index.layout
        let reference = try TestRedis()
        defer { reference.stop() }
        let referencePool = RedisConnectionPool(configuration: RedisConfiguration(host: reference.host, port: reference.port), size: 2)
        defer { referencePool.shutdown() }
        let referenceIndex = RegistrationIndex(pool: referencePool, layout: layout)
        var pipeline = PipelineConfiguration()
        pipeline.bootstrapServers = broker.bootstrapServers
        pipeline.topics = topics
        pipeline.layout = layout
        let rebuilt = try await IndexRebuild(
            reindexer: Reindexer(
                configuration: registry, consumerConfiguration: KafkaConsumerConfiguration(bootstrapServers: broker.bootstrapServers),
                index: referenceIndex),
            statuses: StatusRebuilder(configuration: pipeline, pool: referencePool)
        ).run(token: "reference", logger: .init(label: "test"))
        #expect(rebuilt?.statuses.mismatched == 0)
        let live = try await index.digest().keys
        let fresh = try await referenceIndex.digest().keys
        let isLogState: (String) -> Bool = { key in
            // Progress hashes are working state of the fan-out, not rebuilt for finished events;
            // the schedule index is the scheduler's, which reads it again from herald.scheduled.
            (key.contains("}:") && !key.contains("}:progress:") && !key.contains("{sched:")) || key.contains(":tpl:")
                || key.contains(":status:") || key.contains(":event:")
        }
        let liveState = live.filter { isLogState($0.key) }
        let freshState = fresh.filter { isLogState($0.key) }
        #expect(liveState.count == freshState.count)
        let differing = Set(liveState.keys).union(freshState.keys).filter { liveState[$0] != freshState[$0] }
        #expect(differing.isEmpty, "keys that differ from a rebuild of the log: \(differing.sorted().prefix(5))")
    }

    /// Writes the audience (ids `rl0`, `rl1`, ...) to the registrations topic only: Redis
    /// gets it from the worker.
    static func seedLog(_ registry: RegistryConfiguration, broker: TestBroker, count: Int = registrations) async throws {
        let admin = try KafkaAdmin(configuration: KafkaAdminConfiguration(bootstrapServers: broker.bootstrapServers))
        try await RegistrationLog.createTopic(admin: admin, configuration: registry)
        let producer = try KafkaProducer(configuration: RegistrationLog.producerConfiguration(bootstrapServers: broker.bootstrapServers))
        let log = RegistrationLog(producer: producer, topic: registry.registrationsTopic)
        let template = RegistrationTemplate(name: "news", body: #"{"aps":{"alert":"$(News_English)"}}"#)
        for chunk in stride(from: 0, to: count, by: 5_000) {
            try await log.write(
                (chunk..<min(chunk + 5_000, count)).map {
                    .registration(
                        IndexedRegistration(
                            Registration(
                                registrationId: "rl\($0)", platform: .apns, handle: String(repeating: "ab", count: 32), tags: ["World"],
                                template: template, version: 1)))
                })
        }
        await producer.shutdown()
    }

    static func waitForEpoch(_ index: RegistrationIndex, worker: HeraldBinary.Running) async throws {
        for _ in 0..<1_800 {
            if (try? await index.epoch()) != nil { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("the worker did not build the index:\n\(worker.stderr().suffix(2_000))")
        throw CancellationError()
    }

    static func waitForCompletion(_ eventId: String, reader: StatusReader, worker: HeraldBinary.Running) async throws -> StatusRecord {
        // Fails only when the status stops changing (a stalled event), however slow the machine.
        do {
            return try await waitWhileProgressing("\(eventId) completing", stallLimit: .seconds(180), interval: .milliseconds(100)) {
                () async throws -> ProgressCheck<StatusRecord?, StatusRecord> in
                let status = try? await reader.status(eventId: eventId)
                if let status, status.state == .completed { return .done(status) }
                return .waiting(status)
            }
        } catch {
            let last = try? await reader.status(eventId: eventId)
            Issue.record(
                "\(eventId) did not complete (\(String(describing: last))):\n\(worker.crashHead())\n\(worker.stderr().suffix(3_000))")
            throw error
        }
    }

    static func deliveryCopies(eventId: String, topic: String, broker: TestBroker) async throws -> [String: Int] {
        var copies: [String: Int] = [:]
        var tail = RecordTail(topic: topic, bootstrapServers: broker.bootstrapServers)
        tail.eventId = eventId
        for try await message in tail.records() {
            guard let value = message.value else { continue }
            copies[try DeliveryRecord.decode(value).deliveryId, default: 0] += 1
        }
        return copies
    }
}
