import Foundation
import HeraldAPI
import HeraldDomain
import HeraldKafka
import HeraldPipeline
import HeraldPush
import HeraldRedis
import HeraldRegistry
import Logging
import Prometheus
import ServiceLifecycle
import HeraldStreams

/// Builds `herald api`: the registration service (Kafka log + Redis index), the event
/// publisher, the status reader and the Hummingbird application over them.
public struct APIRunner: Sendable {
    public let settings: HeraldSettings
    public let registry: PrometheusCollectorRegistry

    public init(settings: HeraldSettings, registry: PrometheusCollectorRegistry) {
        self.settings = settings
        self.registry = registry
    }

    public func apiConfiguration() throws -> APIConfiguration {
        var limits = APILimits.default
        limits.registration.payloadLimits = try settings.payloadLimits()
        return APIConfiguration(
            host: settings[.apiHost],
            port: try settings.apiPort(),
            hubResource: settings[.hubUri],
            policies: try SharedAccessPolicy.parseList(settings[.policies]),
            userTokenKey: settings[.userTokenKey].isEmpty ? nil : settings[.userTokenKey],
            limits: limits,
            userTokenAudience: settings[.userTokenAudience].isEmpty ? nil : settings[.userTokenAudience],
            userTokenIssuer: settings[.userTokenIssuer].isEmpty ? nil : settings[.userTokenIssuer],
            scheduleRules: try settings.scheduleRules(),
            maxTokenLifetime: try settings.int(
                .maxTokenLifetimeSeconds, in: 60...31_622_400, expected: "seconds from 60 to 31622400 (a year)"),
            rateLimits: try rateLimits(),
            defaultMaxRegistrations: try settings.int(
                .hubMaxRegistrations, in: 0...10_000_000_000, expected: "registrations from 0 (no limit) to 10000000000"
            ).nonZero,
            defaultHubLimits: try settings.defaultHubLimits(),
            testSendWait: .seconds(
                try settings.int(.testSendWaitSeconds, in: 1...300, expected: "seconds from 1 to 300"))
        )
    }

    /// `HERALD_CALLER_REQUESTS_PER_SECOND` and `HERALD_HUB_REQUESTS_PER_SECOND`; 0 for both is no limit.
    func rateLimits() throws -> RateLimits? {
        let expected = "requests per second from 0 (no limit) to 1000000"
        let perCaller = try settings.int(.callerRequestsPerSecond, in: 0...1_000_000, expected: expected)
        let perHub = try settings.int(.hubRequestsPerSecond, in: 0...1_000_000, expected: expected)
        guard perCaller > 0 || perHub > 0 else { return nil }
        return RateLimits(
            perCaller: perCaller > 0 ? Double(perCaller) : .infinity, perHub: perHub > 0 ? Double(perHub) : .infinity)
    }

    /// The API application and what must be closed after it stops.
    public func makeService(pool: RedisConnectionPool, logger: Logger) async throws -> any Service {
        let registryConfiguration = try settings.registryConfiguration()
        let admin = try KafkaAdmin(configuration: settings.adminConfiguration())
        try await RegistrationLog.createTopic(admin: admin, configuration: registryConfiguration)
        var registryProducer = try settings.reliableProducerConfiguration(clientId: "herald-api")
        // Concurrent registration writes share produce requests: a few milliseconds more per
        // write, many fewer requests for the broker in a rush of them.
        registryProducer.lingerMs = 5
        let producer = try KafkaProducer(configuration: registryProducer, logger: logger)
        // Notifications go out through a producer of their own: behind a flood of registration
        // writes, a breaking alert's record would otherwise queue in the same librdkafka queue
        // and wait its turn among them on the same connection to the broker.
        let sends = try KafkaProducer(
            configuration: settings.reliableProducerConfiguration(clientId: "herald-api-sends"), logger: logger
        )
        let index = RegistrationIndex(pool: pool, layout: try settings.layout())
        try await index.checkMeta()
        let service = RegistrationService(
            configuration: registryConfiguration,
            log: RegistrationLog(producer: producer, topic: registryConfiguration.registrationsTopic),
            index: index, admin: admin, logger: logger
        )
        let topics = try settings.topics
        let publisher = EventPublisher(producer: sends, topics: topics)
        let layout = try settings.layout()
        let kafkaProperties = try settings.kafkaProperties()
        let provisioner = TopicProvisioner(topics: topics, bootstrapServers: settings[.kafkaBrokers], extra: kafkaProperties)
        try await admin.createTopics(
            provisioner.specifications.filter { [topics.hubs, topics.engagements].contains($0.name) }, ignoreExisting: true)
        let hubs = HubDirectory(
            topic: topics.hubs, bootstrapServers: settings[.kafkaBrokers], extra: kafkaProperties, producer: producer, logger: logger)
        let services = APIServices(
            registry: service,
            publisher: KafkaNotificationPublisher(publisher: publisher, pool: pool, layout: layout),
            statusReader: StatusReader(pool: pool, layout: layout),
            scheduler: KafkaNotificationScheduler(
                producer: sends, topics: topics, pool: pool, layout: layout, stopTTLSeconds: PipelineConfiguration.defaultStatusTTLSeconds,
                reader: ScheduleReader(pool: pool, layout: layout, partitions: topics.scheduledPartitions)),
            readinessChecks: [service, HubDirectoryReadiness(directory: hubs)],
            hubs: hubs, sendQuota: RedisSendQuota(pool: pool, layout: layout),
            registrationCounts: IndexRegistrationCounts(index: index),
            archive: KafkaEventArchive(
                pool: pool, layout: layout, topic: topics.events, bootstrapServers: settings[.kafkaBrokers], extra: kafkaProperties,
                logger: logger),
            credentialCheck: { HubPushCredentials.problems($0, hub: $1) },
            engagements: KafkaEngagementRecorder(
                producer: producer, topic: topics.engagements, pool: pool, layout: layout,
                ttlSeconds: PipelineConfiguration.defaultStatusTTLSeconds),
            deadLetters: KafkaDeadLetters(
                topic: topics.eventsDeadLetters, eventsTopic: topics.events, bootstrapServers: settings[.kafkaBrokers],
                extra: kafkaProperties, logger: logger)
        )
        let configuration = try apiConfiguration()
        if configuration.policies.isEmpty {
            logger.warning("no shared-access policies configured (HERALD_POLICIES): every /v1 request will get 401")
        }
        let application = try await buildApplication(
            services: services, configuration: configuration, prometheus: registry, logger: logger
        )
        return HubFollowingService(directory: hubs, application: application)
    }

    public func run() async throws {
        let logger = Logger(label: "herald.api")
        let allocator = try settings.applyAllocator(environment: ProcessInfo.processInfo.environment)
        logger.debug("allocator", metadata: ["allocator": "\(allocator)"])
        let pool = RedisConnectionPool(configuration: try settings.redisConfiguration(), size: try settings.redisPoolSize())
        defer { pool.shutdown() }
        try await pool.verify()
        let application = try await makeService(pool: pool, logger: logger)
        let group = ServiceGroup(
            services: [application], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger
        )
        try await group.run()
    }
}

// HeraldRegistry's service and HeraldPipeline's status reader have exactly the methods the
// API declares for them.
extension RegistrationService: RegistrationStore {
    public func store(for hub: HubName) -> any RegistrationStore { self.hub(hub) }
}
extension StatusReader: NotificationStatusReading {}

extension HubDirectory: HubStore {
    public func hub(_ name: HubName) async throws -> HubDefinition? { try await hub(name, strict: false) }
    public func allHubs() async -> [HubDefinition] { hubs }
}

/// Ready once the hubs topic has been read to where it stood at start.
struct HubDirectoryReadiness: ReadinessChecking {
    let directory: HubDirectory
    func isReady() async -> Bool { directory.isCaughtUp }
}

/// Runs the API with its hub directory's follower beside it; both stop together.
struct HubFollowingService: Service {
    let directory: HubDirectory
    let application: any Service

    func run() async throws {
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { await cancelWhenGracefulShutdown { await directory.run() } }
            try await application.run()
            group.cancelAll()
        }
    }
}

/// Each hub's sends of the current minute, counted in Redis (`<hub keys>:sends:<minute>`,
/// expiring after two minutes), so every API process counts against one limit.
struct RedisSendQuota: SendQuota {
    let pool: RedisConnectionPool
    let layout: SlotLayout

    func admit(hub: HubName, perMinute: Int) async throws -> Bool {
        let minute = Int(Date().timeIntervalSince1970) / 60
        let key = layout.hub(hub).sendCountKey(minute: minute)
        let replies = try await pool.withConnection { connection in
            try await connection.pipeline([RedisCommand("INCR", key), .expire(key, seconds: 120)])
        }
        return try replies[0].get().int.map { $0 <= perMinute } ?? false
    }
}

/// `POST /v1/notifications` publishes through the pipeline's event publisher (acks=all).
///
/// An event with an id the planner has already claimed is checked against that claim first:
/// other content is a conflict (409); the same content is a retry, answered again without a
/// second record. (An id published but not planned yet is published again; the planner then
/// skips the retry or dead-letters the conflict.)
///
/// A broker that does not confirm the record within `deadline` gets the client a 503 naming
/// the event id, within the request's time, instead of an answer after librdkafka's message
/// timeout: the record may still be written, and a retry with the same id is de-duplicated.
struct KafkaNotificationPublisher: NotificationPublishing {
    let publisher: EventPublisher
    let pool: RedisConnectionPool
    let layout: SlotLayout
    var deadline: Duration = .seconds(5)

    func publish(_ event: NotificationEvent, body: [UInt8]) async throws -> String {
        // A test send and a correction take no claim on the event's id (they have ids of their own).
        if let id = event.id, event.testRecipients == nil, event.correction == nil {
            let key = layout.hub(event.hub).eventClaimKey(eventId: id)
            let stored = try await pool.withConnection { try await $0.send(.get(key)) }.string
            if let claim = stored.flatMap(EventClaim.init) {
                let fingerprint = EventClaim.fingerprint(of: event)
                if claim.conflicts(with: fingerprint) { throw EventIdConflict(eventId: id) }
                if claim.fingerprint == fingerprint { return id }
            }
        }
        let publisher = publisher
        let outcome = await answer(within: deadline) { () -> Result<String, any Error>? in
            do {
                let receipt = try await publisher.publish(event)
                let derived: DerivedSend? = event.correction != nil ? .correction : event.testRecipients != nil ? .test : nil
                guard let derived else { return .success(receipt.eventId) }
                return .success(derived.eventId(of: receipt.eventId, partition: receipt.partition, offset: receipt.offset))
            } catch {
                return .failure(error)
            }
        }
        guard let outcome else {
            let id = event.id ?? ""
            throw APIError.unavailable(
                "the event log did not confirm event \"\(id)\" within \(deadline); it may still be published: retry with the same id, which is never sent twice",
                retryAfter: 5)
        }
        return try outcome.get()
    }

    func rehearse(_ event: NotificationEvent) async throws -> String {
        let publisher = publisher
        let outcome = await answer(within: deadline) { () -> Result<String, any Error>? in
            do {
                let receipt = try await publisher.publish(event, rehearsal: true)
                return .success(DerivedSend.rehearsal.eventId(of: receipt.eventId, partition: receipt.partition, offset: receipt.offset))
            } catch {
                return .failure(error)
            }
        }
        guard let outcome else {
            throw APIError.unavailable("the event log did not confirm the rehearsal within \(deadline); retry", retryAfter: 5)
        }
        return try outcome.get()
    }
}

/// A hub's registrations counted in the index (`HLEN` / `SCARD` of every slot).
struct IndexRegistrationCounts: RegistrationCounting {
    let index: RegistrationIndex

    func registrations(hub: HubName) async throws -> Int { try await index.hub(hub).liveCount() }

    func registrations(hub: HubName, handle: String) async throws -> Int { try await index.hub(hub).count(handle: handle) }

    func admitTemplates(of written: [Registration], hub: HubName, limit: Int) async throws -> (admitted: Bool, held: Int) {
        let keys = written.filter { $0.template != nil }.map { IndexedRegistration($0).view.templateKey }
        return try await index.hub(hub).admitTemplates(keys: keys, limit: limit)
    }
}

/// `DELETE /v1/notifications/{id}` puts a cancel request on `herald.scheduled`, in the
/// partition of the event's schedule, for the scheduler role; the list reads its index.
struct KafkaNotificationScheduler: NotificationScheduling {
    let producer: KafkaProducer
    let topics: HeraldTopics
    let pool: RedisConnectionPool
    let layout: SlotLayout
    /// As long as an event's status is kept.
    let stopTTLSeconds: Int
    let reader: ScheduleReader

    func requestStop(eventId: String, hub: HubName) async throws {
        let key = layout.hub(hub).stopKey(eventId: eventId)
        let now = String(Int64(Date().timeIntervalSince1970 * 1_000))
        _ = try await pool.withConnection {
            try await $0.send(RedisCommand("SET", key, now, "EX", String(stopTTLSeconds)))
        }
    }

    func requestCancel(eventId: String, hub: HubName) async throws {
        // Keyed as the schedule is (`ScheduledEvent.scheduleKey`), so it lands beside it.
        let key = hub.recordKey(eventId)
        let record = ScheduleRecord.cancel(eventId: key, requestedAt: Date())
        _ = try await producer.send(
            KafkaOutgoingMessage(
                topic: topics.scheduled, partition: topics.scheduledPartition(of: key), key: Array(key.utf8),
                value: Array(try JSONEncoder().encode(record))))
    }

    func pendingSchedules() async throws -> [ScheduledEvent] { try await reader.pending() }
}

extension SharedAccessPolicy {
    /// Parses `HERALD_POLICIES`: `name:rights:key` entries separated by `;`, rights from
    /// `listen`, `send`, `manage` joined with `+`. The key is everything after the second `:`.
    static func parseList(_ text: String) throws -> [SharedAccessPolicy] {
        var policies: [SharedAccessPolicy] = []
        for (index, entry) in text.split(separator: ";").enumerated() {
            let parts = entry.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3, !parts[0].isEmpty, !parts[2].isEmpty else {
                throw SettingError(key: .policies, value: "entry \(index + 1)", expected: "name:rights:key")
            }
            var rights: Set<AccessRight> = []
            for name in parts[1].split(separator: "+") {
                guard let right = AccessRight(rawValue: name.lowercased()) else {
                    throw SettingError(key: .policies, value: "\(parts[0]): \(name)", expected: "rights from listen, send, manage")
                }
                rights.insert(right)
            }
            policies.append(SharedAccessPolicy(name: String(parts[0]), key: String(parts[2]), rights: rights))
        }
        return policies
    }
}

extension Int {
    /// Nil for 0, a setting's "no limit".
    fileprivate var nonZero: Int? { self == 0 ? nil : self }
}

/// `herald cancel`: cancels or stops an event as `DELETE /v1/notifications/{id}` does
/// (`EventCancellation`), with a producer and a Redis connection of its own.
public struct EventCanceller: Sendable {
    let pool: RedisConnectionPool
    let producer: KafkaProducer
    let cancellation: EventCancellation

    public init(settings: HeraldSettings, wait: Duration) throws {
        let pool = RedisConnectionPool(configuration: try settings.redisConfiguration(), size: 1)
        let producer = try KafkaProducer(
            configuration: settings.reliableProducerConfiguration(clientId: "herald-cancel"), logger: Logger(label: "herald.cancel"))
        let topics = try settings.topics
        let layout = try settings.layout()
        let scheduler = KafkaNotificationScheduler(
            producer: producer, topics: topics, pool: pool, layout: layout, stopTTLSeconds: PipelineConfiguration.defaultStatusTTLSeconds,
            reader: ScheduleReader(pool: pool, layout: layout, partitions: topics.scheduledPartitions))
        self.pool = pool
        self.producer = producer
        cancellation = EventCancellation(statusReader: StatusReader(pool: pool, layout: layout), scheduler: scheduler, wait: wait)
    }

    /// The status and what became of the request; a refusal throws its words.
    public func cancel(eventId: String, hub: HubName) async throws -> (StatusRecord, EventCancellation.Outcome) {
        do {
            return try await cancellation.cancel(eventId: eventId, hub: hub)
        } catch let error as APIError {
            throw EventCancellationRefused(message: error.message)
        }
    }

    public func shutdown() async {
        await producer.shutdown()
        pool.shutdown()
    }
}

/// What became of a cancel request (`EventCancellation.Outcome`).
public typealias CancellationOutcome = EventCancellation.Outcome

/// Why `herald cancel` could not cancel: the words of the API's 404, 409 or 503.
public struct EventCancellationRefused: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
