import Foundation
import HeraldDomain
import HeraldKafka
import HeraldPipeline
import HeraldRedis
import HeraldRegistry
import HeraldTestSupport
import Logging
import HeraldStreams
import Synchronization

/// A private Redis and broker, prefixed topics, and the planner and fan-out roles running in
/// this process: the whole pipeline for one test.
final class PipelineHarness: @unchecked Sendable {
    let redis: TestRedis
    let broker: TestBroker
    var configuration: PipelineConfiguration
    let pool: RedisConnectionPool
    let index: RegistrationIndex
    private var planner: PlannerService?
    private var fanouts: [FanoutService] = []
    private(set) var scheduler: SchedulerService?
    private var running: [Task<Void, any Error>] = []
    /// Roles whose `run` returned or threw.
    private let rolesEnded = Atomic<Int>(0)
    private var publisher: KafkaProducer?
    /// What the roles share, as in a worker: bulk lanes step aside for express work, one
    /// transaction gate, one progress board.
    let context = WorkerContext()
    private var isShutDown = false

    init(slots: Int = 16, configure: (inout PipelineConfiguration) -> Void = { _ in }) async throws {
        redis = try TestRedis()
        broker = try TestBroker()
        var configuration = PipelineConfiguration().withEmbeddedBrokerWaits()
        configuration.bootstrapServers = broker.bootstrapServers
        configuration.redis = try RedisConfiguration(url: redis.url)
        // Replies wait as long as the machine needs: these tests are not about Redis timeouts,
        // and a shared cluster under a busy machine has answered a seeding script after 10 s.
        configuration.redis.commandTimeout = 120
        let prefix = TestBroker.uniqueName("t")
        var topics = HeraldTopics.prefixed(prefix)
        topics.eventsPartitions = 2
        topics.tasksPartitions = 4
        topics.expressTasksPartitions = 2
        topics.deliveriesPartitions = 4
        topics.statusPartitions = 2
        configuration.topics = topics
        configuration.layout = SlotLayout(slotCount: slots, prefix: prefix)
        configuration.plannerGroup = prefix + "-planner"
        configuration.schedulerGroup = prefix + "-scheduler"
        configuration.fanoutGroup = prefix + "-fanout"
        configuration.expressGroup = prefix + "-express"
        configuration.instanceId = prefix
        // Tansu holds a group's join for about half the session (TestBroker.sessionTimeoutMs).
        configuration.sessionTimeoutMs = TestBroker.sessionTimeoutMs
        configuration.leaveGroupOnClose = false
        configuration.bulkLanes = 1
        configuration.expressLanes = 1
        configuration.planner.bulkTaskCount = 4
        configuration.planner.narrowSlotLimit = 3
        configuration.scanCount = 100
        configuration.lagSampleInterval = .seconds(3_600)
        configure(&configuration)
        self.configuration = configuration
        pool = RedisConnectionPool(configuration: configuration.redis, size: 2)
        index = RegistrationIndex(pool: pool, layout: configuration.layout)
        try await index.markBuilt()
        try await TopicProvisioner(topics: topics, bootstrapServers: broker.bootstrapServers).provision()
    }

    static var logger: Logger {
        var logger = Logger(label: "herald.test")
        logger.logLevel = ProcessInfo.processInfo.environment["HERALD_TEST_LOG"].flatMap(Logger.Level.init(rawValue:)) ?? .warning
        return logger
    }

    /// What `herald reindex` runs, on this harness's topics and Redis (the registrations
    /// topic is created empty if missing: the harness seeds Redis directly).
    func rebuild() async throws -> IndexRebuild {
        var registry = RegistryConfiguration()
        registry.registrationsTopic = configuration.topics.status + ".registrations"
        registry.slotCount = configuration.layout.slotCount
        registry.redisPrefix = configuration.layout.prefix
        let admin = try KafkaAdmin(configuration: KafkaAdminConfiguration(bootstrapServers: broker.bootstrapServers))
        try await RegistrationLog.createTopic(admin: admin, configuration: registry)
        return IndexRebuild(
            reindexer: Reindexer(
                configuration: registry, consumerConfiguration: KafkaConsumerConfiguration(bootstrapServers: broker.bootstrapServers),
                index: index),
            statuses: StatusRebuilder(configuration: configuration, pool: pool, producer: try producer()))
    }

    // MARK: Roles

    func startRoles(planner runPlanner: Bool = true, fanout runFanout: Bool = true, scheduler runScheduler: Bool = false) {
        if runScheduler {
            let service = SchedulerService(configuration: configuration, context: context, logger: Self.logger)
            scheduler = service
            running.append(role { try await service.run() })
        }
        if runPlanner {
            let service = PlannerService(configuration: configuration, context: context, logger: Self.logger)
            planner = service
            running.append(role { try await service.run() })
        }
        if runFanout { startFanout() }
    }

    /// One more fan-out role, with the configuration's lanes or `lanes` (bulk, express).
    func startFanout(lanes: (bulk: Int, express: Int)? = nil) {
        var settings = configuration
        if let lanes {
            settings.bulkLanes = lanes.bulk
            settings.expressLanes = lanes.express
        }
        let service = FanoutService(configuration: settings, context: context, logger: Self.logger)
        fanouts.append(service)
        running.append(role { try await service.run() })
    }

    private func role(_ run: @escaping @Sendable () async throws -> Void) -> Task<Void, any Error> {
        Task { [self] in
            defer { rolesEnded.add(1, ordering: .releasing) }
            try await run()
        }
    }

    /// Whether every role started is still running (none returned or threw).
    var rolesStillRunning: Bool { !running.isEmpty && rolesEnded.load(ordering: .acquiring) == 0 }

    /// Graceful stop: each role finishes its batch, commits and leaves its group.
    func stopRoles() async throws {
        planner?.stop()
        for service in fanouts { service.stop() }
        scheduler?.stop()
        for task in running { try await task.value }
        running = []
        rolesEnded.store(0, ordering: .releasing)
        planner = nil
        fanouts = []
        scheduler = nil
    }

    /// Stops everything. Clients are closed first because Tansu waits for open connections
    /// before it exits on SIGTERM; the servers are stopped on a dispatch thread, never on the
    /// cooperative pool, and not waited for beyond a few seconds.
    func shutdown() async {
        guard !isShutDown else { return }
        isShutDown = true
        try? await stopRoles()
        await publisher?.shutdown(flushTimeout: .seconds(2))
        publisher = nil
        pool.shutdown()
        let broker = broker
        let redis = redis
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let once = OnceFlag()
            DispatchQueue.global().async {
                // The servers are spawned from a dispatch thread and inherit its blocked
                // signals, so SIGTERM never reaches them: end them with SIGKILL first.
                for port in [redis.port, broker.port].compactMap({ $0 }) { killChildServer(listeningOn: port) }
                redis.stop()
                broker.stop()
                if once.claim() { continuation.resume() }
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + 10) {
                if once.claim() { continuation.resume() }
            }
        }
    }

    // MARK: Registrations

    func seed(_ registrations: [Registration]) async throws {
        var start = 0
        while start < registrations.count {
            let chunk = registrations[start..<min(start + 500, registrations.count)]
            _ = try await index.apply(chunk.map { RegistryRecord(hub: $0.hub, change: .registration(IndexedRegistration($0))) })
            start += 500
        }
    }

    /// Creates `name` on the hubs topic, as `PUT /v1/hubs/{name}` would.
    func createHub(
        _ name: HubName, frequencyCaps: [FrequencyCap] = [], quietHoursHoldBreaking: Bool = false, limits: HubLimits = HubLimits()
    ) async throws {
        let directory = HubDirectory(
            topic: configuration.topics.hubs, bootstrapServers: broker.bootstrapServers, producer: try producer())
        var hub = HubDefinition(name: name, policies: HubDefinition.defaultPolicies(), limits: limits, frequencyCaps: frequencyCaps)
        hub.quietHoursHoldBreaking = quietHoursHoldBreaking
        try await directory.put(hub)
    }

    // MARK: Events

    func publish(_ event: NotificationEvent) async throws -> String {
        try await publishReceipt(event).eventId
    }

    /// Publishes `event` (a rehearsal with `rehearsal`); where its record went.
    func publishReceipt(_ event: NotificationEvent, rehearsal: Bool = false) async throws -> EventPublisher.Receipt {
        try await EventPublisher(producer: try producer(), topics: configuration.topics).publish(event, rehearsal: rehearsal)
    }

    /// Produces raw bytes to the events topic (or `topic`), as a newsroom system might.
    @discardableResult
    func publishRaw(_ bytes: [UInt8]?, key: String? = nil, partition: Int32? = nil, topic: String? = nil) async throws
        -> KafkaDeliveryReport
    {
        try await producer().send(
            KafkaOutgoingMessage(
                topic: topic ?? configuration.topics.events, partition: partition, key: key.map { Array($0.utf8) }, value: bytes
            ))
    }

    private func producer() throws -> KafkaProducer {
        if let publisher { return publisher }
        var settings = KafkaProducerConfiguration(bootstrapServers: broker.bootstrapServers)
        settings.lingerMs = 0
        settings.extra = ["message.max.bytes": "2000000"]
        let fresh = try KafkaProducer(configuration: settings, logger: Self.logger)
        publisher = fresh
        return fresh
    }

    // MARK: Observing

    /// Waits until `herald:status:<id>` holds a final state; fails only when the status stays the
    /// same (or absent) for `stallLimit`, however slow the machine is.
    func finalStatus(_ eventId: String, hub: HubName = .default, stallLimit: Duration = .seconds(120)) async throws -> StatusRecord {
        let reader = StatusReader(pool: pool, layout: configuration.layout)
        return try await waitWhileProgressing("event \(eventId) reaching a final status", stallLimit: stallLimit) {
            () async throws -> ProgressCheck<StatusRecord?, StatusRecord> in
            let status = try await reader.status(eventId: eventId, hub: hub)
            if let status, status.state.isTerminal { return .done(status) }
            return .waiting(status)
        }
    }

    /// Every committed record of `topic` (optionally one event's).
    func records(_ topic: String, eventId: String? = nil) async throws -> [KafkaMessage] {
        var tail = RecordTail(topic: topic, bootstrapServers: broker.bootstrapServers)
        tail.eventId = eventId
        var records: [KafkaMessage] = []
        for try await record in tail.records(logger: Self.logger) { records.append(record) }
        return records
    }

    func deliveries(eventId: String, hub: HubName = .default) async throws -> [DeliveryRecord] {
        try await records(configuration.topics.deliveries, eventId: eventId).compactMap { message in
            guard let value = message.value else { return nil }
            let record = try DeliveryRecord.decode(value)
            return record.eventId == eventId && record.hub == hub ? record : nil
        }
    }
}

/// A registration for tests: a template one (`language` picks `News_<language>`) or native.
func testRegistration(
    _ id: String, platform: Platform = .apns, tags: [String], language: String? = "English", expiresAt: Date? = nil
) -> Registration {
    let handle = platform == .apns ? String(repeating: "ab", count: 32) : "fcm-token-\(id)"
    var template: RegistrationTemplate?
    if let language {
        let body =
            platform == .apns
            ? #"{"aps":{"alert":"$(News_\#(language))"},"inAppMessage":"$(News_\#(language))"}"#
            : #"{"message":{"notification":{"body":"$(News_\#(language))"}}}"#
        template = RegistrationTemplate(name: "news\(language)", body: body)
    }
    return Registration(
        registrationId: id, platform: platform, handle: handle, tags: tags, template: template, expiresAt: expiresAt, version: 1)
}

/// A clock the test moves: the planner and the scheduler judge schedules by it.
final class TestClock: Sendable {
    private let now: Mutex<Date>

    init(_ start: Date) { now = Mutex(start) }

    var date: Date { now.withLock { $0 } }
    func set(_ date: Date) { now.withLock { $0 = date } }
    func advance(by seconds: Double) { now.withLock { $0 = $0.addingTimeInterval(seconds) } }
}

/// Resumes a continuation exactly once when two paths race (done vs timed out).
final class OnceFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var claimed = false

    func claim() -> Bool {
        lock.withLock {
            defer { claimed = true }
            return !claimed
        }
    }
}

/// Runs `body` with a fresh pipeline and always shuts it down, also when `body` throws.
func withPipelineHarness(
    slots: Int,
    configure: (inout PipelineConfiguration) -> Void = { _ in },
    body: (PipelineHarness) async throws -> Void
) async throws {
    let harness = try await PipelineHarness(slots: slots, configure: configure)
    do {
        try await body(harness)
    } catch {
        await harness.shutdown()
        throw error
    }
    await harness.shutdown()
}

extension TestBroker {
    /// The local port of a broker this process started, nil for an external one.
    var port: Int? {
        guard !isExternal, let text = bootstrapServers.split(separator: ":").last else { return nil }
        return Int(text)
    }
}

/// SIGKILLs the child of this process whose command line names `127.0.0.1:<port>` (the
/// redis-server or Tansu a test started), found by its id in /proc.
func killChildServer(listeningOn port: Int) {
    let me = getpid()
    let needle = "127.0.0.1:\(port)"
    guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return }
    for entry in entries {
        guard let pid = Int32(entry),
            let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let parentLine = status.split(separator: "\n").first(where: { $0.hasPrefix("PPid:") }),
            Int32(parentLine.dropFirst(5).trimmingCharacters(in: .whitespaces)) == me,
            let commandLine = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline")
        else { continue }
        let text = String(decoding: commandLine.map { $0 == 0 ? UInt8(ascii: " ") : $0 }, as: UTF8.self)
        if text.contains(needle) { kill(pid, SIGKILL) }
    }
}
