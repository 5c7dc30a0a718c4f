import Foundation
import HeraldDomain
import HeraldKafka
import HeraldPipeline
import HeraldRedis
import HeraldRegistry

/// What a phase made beyond its own topics and keys, removed with them.
enum PhaseLeftover: Sendable {
    case keys(prefix: String)
    case topic(String)
}

/// New registrations of one hub written as fast as `concurrency` writers can, through the
/// API's own write path (`RegistrationService.put`: a version reserved in Redis, the record
/// acknowledged by the broker on a registrations topic of the phase, the change written through
/// to Redis), until `stop()` or until every registration of `population` is written.
final class RegistrationFlood: Sendable {
    struct Summary: Sendable {
        var written: Int
        var ended: Date
    }

    private let service: RegistrationService
    private let producer: KafkaProducer
    private let pool: RedisConnectionPool
    private let population: SeedPopulation
    private let concurrency: Int
    private let next = SharedCounter()
    private let done = SharedCounter()
    private let stopping = StopFlag()

    /// - Parameter cleanUp: told the topic and the keys the flood writes.
    init(
        phase: PopulationPhase, hub: HubName, population count: Int, concurrency: Int,
        cleanUp: @Sendable (PhaseLeftover) -> Void
    ) async throws {
        let configuration = phase.configuration
        let logger = phase.environment.logger
        var registry = RegistryConfiguration()
        registry.registrationsTopic = configuration.topics.status + ".registrations"
        registry.slotCount = configuration.layout.slotCount
        registry.redisPrefix = configuration.layout.prefix
        var adminConfiguration = KafkaAdminConfiguration(bootstrapServers: configuration.bootstrapServers)
        adminConfiguration.extra = configuration.kafkaExtra
        let admin = try KafkaAdmin(configuration: adminConfiguration, logger: logger)
        try await RegistrationLog.createTopic(admin: admin, configuration: registry)
        cleanUp(.topic(registry.registrationsTopic))
        cleanUp(.keys(prefix: configuration.layout.hub(hub).hubPrefix))
        // As the API's registration producer: idempotent, acknowledged by all, 5 ms of linger.
        var settings = KafkaProducerConfiguration(bootstrapServers: configuration.bootstrapServers)
        settings.clientId = "herald-bench-flood"
        settings.lingerMs = 5
        settings.extra = configuration.kafkaExtra
        producer = try KafkaProducer(configuration: settings, logger: logger)
        pool = RedisConnectionPool(configuration: configuration.redis, size: 4, logger: logger)
        service = RegistrationService(
            configuration: registry, log: RegistrationLog(producer: producer, topic: registry.registrationsTopic),
            index: RegistrationIndex(pool: pool, layout: configuration.layout), admin: nil, logger: logger
        ).hub(hub)
        population = SeedPopulation(count: count, seed: phase.population.seed &+ 0xF100_D000, latencyUsers: 0, hub: hub)
        self.concurrency = max(1, concurrency)
    }

    /// Registrations written so far.
    var written: Int { done.current }
    /// Writes that found a breaking alert in flight and waited for it (`AlertYield`).
    var yielded: Int { service.alertYield.writesThatWaited }

    /// Writes until `stop()` or until the population is written, then closes its clients.
    func run() async throws -> Summary {
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<concurrency {
                    group.addTask { [self] in
                        while !stopping.isSet {
                            let index = next.add(1)
                            guard index < population.count else { return }
                            var registration = population.registration(at: index)
                            registration.registrationId = service.issueRegistrationId()
                            _ = try await service.put(registration, expectedVersion: nil)
                            done.add(1)
                        }
                    }
                }
                try await group.waitForAll()
            }
        } catch {
            await close()
            throw error
        }
        let summary = Summary(written: done.current, ended: Date())
        await close()
        return summary
    }

    func stop() { stopping.set() }

    /// Waits until the flood has written something and then for `duration` more: its rate, in
    /// registrations per second, over that time.
    func waitUntilWriting(for duration: Duration, timeout: Duration) async throws -> Double {
        let deadline = ContinuousClock.now + timeout
        while done.current == 0 {
            guard ContinuousClock.now < deadline else {
                throw BenchmarkError("the registration flood wrote nothing within \(timeout)", code: "flood_stalled")
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        let from = (at: ContinuousClock.now, count: done.current)
        try await Task.sleep(for: duration)
        return Double(done.current - from.count) / max((ContinuousClock.now - from.at).seconds, 1e-9)
    }

    private func close() async {
        await producer.shutdown()
        pool.shutdown()
    }
}
