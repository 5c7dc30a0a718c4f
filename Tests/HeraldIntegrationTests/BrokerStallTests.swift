import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import HeraldApp
import HeraldDomain
import HeraldKafka
import HeraldPipeline
import HeraldRedis
import HeraldRegistry
import HeraldTestSupport
import Testing
import HeraldStreams

/// The broker's process paused (SIGSTOP) in the middle of a broadcast, then resumed: the
/// worker's health says so while it lasts, the worker recovers by itself, nothing is lost, and
/// SIGTERM still ends it within its drain time.
@Suite("broker stall", .heavy, .enabled(if: HeraldBinary.isBuilt, "build the herald executable first"))
struct BrokerStallTests {
    static let registrations = 20_000

    @Test("SIGSTOP of the broker mid-broadcast: not ready, then not live; after SIGCONT every delivery arrives and SIGTERM ends the worker")
    func pausedBroker() async throws {
        let redis = try TestRedis()
        let broker = try TestBroker()
        defer {
            broker.signal(SIGCONT)
            broker.stop()
            redis.stop()
        }
        guard !broker.isExternal else { return }  // an external broker's process is not ours to pause
        let prefix = TestBroker.uniqueName("stall")
        let layout = SlotLayout(slotCount: 64, prefix: prefix)
        let topics = HeraldTopics.prefixed(prefix)
        let pool = RedisConnectionPool(configuration: try RedisConfiguration(url: redis.url), size: 2)
        defer { pool.shutdown() }
        try await seedBroadcastAudience(RegistrationIndex(pool: pool, layout: layout), count: Self.registrations, idPrefix: "st")

        let metricsPort = freeLocalPort()
        let worker = try HeraldBinary.start(
            ["worker"],
            environment: [
                "HERALD_KAFKA_BROKERS": broker.bootstrapServers, "HERALD_REDIS_URL": redis.url,
                "HERALD_TOPIC_PREFIX": prefix + ".herald.", "HERALD_REDIS_PREFIX": prefix, "HERALD_SLOTS": "64",
                // 64 small tasks, each its own transaction: the broadcast spans many commits, so
                // the pause falls in the middle of it even when the machine is loaded.
                "HERALD_TASKS_PER_BROADCAST": "64", "HERALD_DELIVERIES_PER_TASK": "500", "HERALD_INSTANCE_ID": prefix,
                "HERALD_SESSION_TIMEOUT_MS": String(TestBroker.stoppedWorkerSessionTimeoutMs), "HERALD_ROLES": "planner,fanout",
                "HERALD_LOG_LEVEL": "notice",
                "HERALD_API_HOST": "127.0.0.1",
                "HERALD_METRICS_PORT": String(metricsPort), "HERALD_STALL_READY_SECONDS": "3",
                "HERALD_STALL_LIVE_SECONDS": "10", "HERALD_DRAIN_SECONDS": "5",
            ])
        let health = "http://127.0.0.1:\(metricsPort)/health"
        try await Self.waitFor(status: 200, at: health + "/ready", within: .seconds(60), worker: worker)
        let send = (name: "Send", key: "send-key-for-the-broker-stall-test-000001")
        let base = URL(string: "http://127.0.0.1:\(freeLocalPort())/")!
        let api = try HeraldBinary.start(
            ["api"],
            environment: [
                "HERALD_KAFKA_BROKERS": broker.bootstrapServers, "HERALD_REDIS_URL": redis.url,
                "HERALD_TOPIC_PREFIX": prefix + ".herald.", "HERALD_REDIS_PREFIX": prefix, "HERALD_SLOTS": "64",
                "HERALD_API_HOST": "127.0.0.1", "HERALD_API_PORT": String(base.port!), "HERALD_HUB_URI": base.absoluteString,
                "HERALD_METRICS_PORT": "0", "HERALD_POLICIES": "\(send.name):send:\(send.key)",
                "HERALD_ID_SECRET": "id-secret-for-the-broker-stall-test-00001", "HERALD_LOG_LEVEL": "notice",
            ])
        defer {
            api.signal(SIGTERM)
            _ = api.waitForExit(timeout: 20)
        }
        let client = HeraldHTTPClient.signed(base, send)
        try await client.waitUntilReady { String(api.stderr().suffix(2_000)) }

        // The worker created the topics before it was ready; the watcher reads from the start.
        let watcher = try await DeliveryWatcher(bootstrapServers: broker.bootstrapServers, topic: topics.deliveries)
        let eventId = prefix + "-broadcast"
        let publisher = try EventPublisher(bootstrapServers: broker.bootstrapServers, topics: topics)
        // The worker runs in short slices until its first deliveries are in the log; the broker
        // is paused while the worker stands still, so the pause falls inside the broadcast.
        worker.signal(SIGSTOP)
        _ = try await publisher.publish(
            try NotificationEvent.decode(Array(#"{"id":"\#(eventId)","properties":{"News_English":"Summit ends"}}"#.utf8)))
        await publisher.shutdown()
        try await worker.runInSlices(timeout: .seconds(90)) { try await watcher.drain() > 0 }
        await watcher.close()

        broker.signal(SIGSTOP)
        worker.signal(SIGCONT)
        let statusReader = StatusReader(pool: pool, layout: layout)
        let atPause = try await statusReader.status(eventId: eventId)
        try #require(atPause?.state != .completed, "the broadcast finished before the pause; make it larger")
        try await Self.waitFor(status: 503, at: health + "/ready", within: .seconds(20), worker: worker)
        // A notification sent meanwhile is answered 503 naming its id, within the request's
        // time (5 s): not 202 after librdkafka's message timeout (about 30 s).
        let sending = ContinuousClock.now
        let frozen = try await client.send(
            "POST", "/v1/notifications", body: Data(#"{"id":"sent-while-frozen","tags":"World","properties":{"News_English":"x"}}"#.utf8),
            timeout: 60)
        let answeredAfter = ContinuousClock.now - sending
        #expect(frozen.status == 503, "\(frozen.status) \(frozen.text)")
        #expect(answeredAfter < .seconds(25), "answered after \(answeredAfter): the request's deadline did not hold")
        #expect(frozen.text.contains("sent-while-frozen"), "\(frozen.text)")
        #expect(frozen.header("Retry-After") != nil)
        try await Self.waitFor(status: 503, at: health + "/live", within: .seconds(30), worker: worker)
        broker.signal(SIGCONT)

        var final: StatusRecord?
        for _ in 0..<1_800 {
            if let status = try await statusReader.status(eventId: eventId), status.state == .completed {
                final = status
                break
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        let status = try #require(final, "no completed status after the broker resumed:\n\(worker.stderr().suffix(3_000))")
        #expect(status.targets.total == Self.registrations)
        try await Self.waitFor(status: 200, at: health + "/live", within: .seconds(30), worker: worker)
        try await Self.waitFor(status: 200, at: health + "/ready", within: .seconds(30), worker: worker)

        var delivered = Set<String>()
        var tail = RecordTail(topic: topics.deliveries, bootstrapServers: broker.bootstrapServers)
        tail.eventId = eventId
        for try await message in tail.records() {
            if let value = message.value { delivered.insert(try DeliveryRecord.decode(value).registrationId) }
        }
        #expect(delivered.count == Self.registrations, "lost \(Self.registrations - delivered.count) deliveries")

        // SIGTERM while the broker is paused again: leaving the groups cannot finish, and the
        // worker still ends within its drain time (5 s) plus the 10 s grace.
        broker.signal(SIGSTOP)
        let stopping = ContinuousClock.now
        worker.signal(SIGTERM)
        #expect(worker.waitForExit(timeout: 25), "SIGTERM did not end the worker within its drain time plus grace")
        // It ends with a status (0 drained, 2 past its deadline), never by a crash (librdkafka's
        // clean-up at exit once crashed it under the clients the frozen broker held).
        #expect(
            worker.process.terminationReason == .exit && [0, 2].contains(worker.process.terminationStatus),
            "the worker ended by \(worker.process.terminationReason == .exit ? "status" : "signal") \(worker.process.terminationStatus):\n\(worker.crashHead())"
        )
        broker.signal(SIGCONT)
        print("broker stall: resumed and completed \(status.targets.total) deliveries; SIGTERM took \(ContinuousClock.now - stopping)")
    }

    /// Polls `url` until it answers `status`.
    static func waitFor(status expected: Int, at url: String, within timeout: Duration, worker: HeraldBinary.Running) async throws {
        let deadline = ContinuousClock.now + timeout
        var last = 0
        while ContinuousClock.now < deadline {
            last = await httpStatus(url)
            if last == expected { return }
            try await Task.sleep(for: .milliseconds(250))
        }
        throw TestServerError(
            message: "\(url) answered \(last), not \(expected), within \(timeout); worker log:\n\(worker.stderr().suffix(3_000))")
    }

    static func httpStatus(_ url: String) async -> Int {
        var request = URLRequest(url: URL(string: url)!)
        request.timeoutInterval = 5
        guard let (_, response) = try? await URLSession.shared.data(for: request) else { return 0 }
        return (response as? HTTPURLResponse)?.statusCode ?? 0
    }
}
