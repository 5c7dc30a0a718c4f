import Foundation
import HeraldDomain
import HeraldKafka
import HeraldPipeline
import HeraldRedis
import HeraldRegistry
import Logging
import Synchronization

/// Times `herald reindex`: produces the population to a compacted registrations topic as the
/// API would have, then rebuilds a fresh Redis prefix from it with the real `Reindexer`.
/// For populations up to 200,000 the rebuilt keys are also compared with the seeded ones.
struct ReindexPhase {
    let population: SeedPopulation
    let names: BenchmarkNames
    let configuration: PipelineConfiguration
    let logger: Logger

    func run(seededLayout: SlotLayout, resources: (_ topic: String, _ redisPrefix: String) -> Void) async throws -> BenchmarkReport.Reindex
    {
        var registry = RegistryConfiguration()
        registry.registrationsTopic = names.topicPrefix + "registrations"
        registry.slotCount = seededLayout.slotCount
        registry.redisPrefix = names.redisPrefix + "-reindex"
        resources(registry.registrationsTopic, registry.redisPrefix)
        var adminConfiguration = KafkaAdminConfiguration(bootstrapServers: configuration.bootstrapServers)
        adminConfiguration.extra = configuration.kafkaExtra
        let admin = try KafkaAdmin(configuration: adminConfiguration, logger: logger)
        try await RegistrationLog.createTopic(admin: admin, configuration: registry)

        // Produce: idempotent and batched, as a bulk import would.
        var settings = RegistrationLog.producerConfiguration(bootstrapServers: configuration.bootstrapServers)
        settings.lingerMs = 20
        settings.compression = .lz4
        settings.extra = configuration.kafkaExtra
        let producer = try KafkaProducer(configuration: settings, logger: logger)
        let total = population.count
        Console.say("  reindex: producing \(Console.count(total)) registrations to \(registry.registrationsTopic)")
        let produceStarted = ContinuousClock.now
        let topic = registry.registrationsTopic
        let population = population
        try await BlockingThreads.run(name: "herald.bench.registrations") {
            for index in 0..<total {
                let change = RegistryChange.registration(IndexedRegistration(population.registration(at: index)))
                try producer.enqueue(change.outgoingMessage(topic: topic))
            }
        }
        try await producer.flush(timeout: .seconds(300))
        let produceSeconds = (ContinuousClock.now - produceStarted).seconds
        await producer.shutdown()

        // Rebuild.
        let pool = RedisConnectionPool(configuration: configuration.redis, size: 4, logger: logger)
        defer { pool.shutdown() }
        let index = RegistrationIndex(pool: pool, layout: registry.layout, logger: logger)
        var consumerConfiguration = KafkaConsumerConfiguration(bootstrapServers: configuration.bootstrapServers)
        consumerConfiguration.extra = configuration.kafkaExtra
        let reindexer = Reindexer(
            configuration: registry, consumerConfiguration: consumerConfiguration,
            index: index, logger: logger
        )
        Console.say("  reindex: rebuilding Redis prefix \(registry.redisPrefix)")
        let lastReport = SharedCounter()
        let summary = try await reindexer.run { progress in
            let second = Int(Date().timeIntervalSince1970)
            if lastReport.current != second {
                lastReport.add(second - lastReport.current)
                Console.say("  reindex: \(Console.count(progress.recordsRead)) / \(Console.count(progress.recordsTotal))")
            }
        }
        Console.say("  reindex: \(Console.count(summary.applied)) applied in \(Console.fixed(summary.seconds, 2)) s")

        var identical: Bool?
        if total <= 200_000 {
            let seeded = try await RegistrationIndex(pool: pool, layout: seededLayout, logger: logger).digest()
            let rebuilt = try await index.digest()
            func stripped(_ digest: IndexDigest, _ prefix: String) -> [String: String] {
                var keys: [String: String] = [:]
                for (key, value) in digest.keys where !key.contains(":status:") && !key.contains(":event:") && !key.contains(":progress:") {
                    keys[String(key.dropFirst(prefix.count))] = value
                }
                return keys
            }
            identical = stripped(seeded, seededLayout.prefix) == stripped(rebuilt, registry.redisPrefix)
        }
        return BenchmarkReport.Reindex(
            registrations: total, produceSeconds: produceSeconds, seconds: summary.seconds,
            perSecond: Double(summary.applied) / max(summary.seconds, 1e-9), applied: summary.applied, identicalToSeeded: identical
        )
    }
}
