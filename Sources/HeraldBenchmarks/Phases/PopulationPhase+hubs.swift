import Foundation
import HeraldDomain
import HeraldKafka
import HeraldPipeline
import HeraldRedis
import HeraldRegistry
import HeraldStreams

extension PopulationPhase.Context {
    /// The hub that gets the breaking alert, and the one flooded with registrations meanwhile.
    static let alertHub = HubName("bench-sports")!
    static let floodHub = HubName("bench-flood")!
    /// The frequency-cap phase's capped hub.
    static let cappedHub = HubName("bench-capped")!

    /// The hub isolation rows (`BenchmarkReport.HubIsolation`). A second hub of
    /// `options.isolationAudience` registrations gets a breaking broadcast, timed alone, then
    /// while the main hub broadcasts to its whole population (`broadcastExpected` deliveries),
    /// then while a third hub takes `options.isolationFlood` new registrations through the
    /// script the API's write-through runs. The hubs share the workers, the broker and Redis.
    ///
    /// `keyPrefix` is told each hub's Redis key prefix, to be removed with the phase's keys.
    func hubIsolation(broadcastExpected: Int, keyPrefix: (String) -> Void) async throws -> [BenchmarkReport.HubIsolation] {
        let configuration = phase.configuration
        let logger = phase.environment.logger
        let prefix = phase.names.redisPrefix
        let timeout = Duration.seconds(options.eventTimeoutSeconds)
        try await createHubs(
            [Self.alertHub, options.isolationFlood > 0 ? Self.floodHub : nil].compactMap { name in
                name.map { HubDefinition(name: $0, policies: HubDefinition.defaultPolicies()) }
            })

        let audience = SeedPopulation(
            count: options.isolationAudience, seed: phase.population.seed &+ 0x5B0A_7500, latencyUsers: 0, hub: Self.alertHub)
        let layout = configuration.layout.hub(Self.alertHub)
        keyPrefix(layout.hubPrefix)
        let seeded = try await PopulationSeeder(
            population: audience, layout: layout, redis: configuration.redis, path: options.seedPath, batchSize: options.seedBatch,
            threads: options.seedThreads, logger: logger
        ).seed()
        Console.say(
            "  isolation: seeded \(Console.count(seeded.registrations)) registrations of hub \(Self.alertHub) in \(Console.fixed(seeded.seconds)) s"
        )
        _ = try await RedisBackgroundWork.waitUntilIdle(configuration.redis)

        var alone = BenchmarkEvents.broadcast(id: "\(prefix)-other-hub-alone")
        alone.hub = Self.alertHub
        alone.urgency = .breaking
        let expected = audience.expectedDeliveries(for: [alone])[0]
        // A breaking alert's deliveries go to the express lanes' partitions.
        try watcher.readPriorityPartitions(true)
        let aloneRun = try await fanout(label: "another hub's breaking alert alone", event: alone, expected: expected)
        var rows: [BenchmarkReport.HubIsolation] = []

        var duringBroadcast = alone
        duringBroadcast.id = "\(prefix)-other-hub-broadcast"
        let busy = BenchmarkEvents.broadcast(id: "\(prefix)-busy-hub")
        let measured = try await alert(
            duringBroadcast, expected: expected, duringBroadcast: busy, broadcastExpected: broadcastExpected)
        rows.append(
            BenchmarkReport.HubIsolation(
                load: "a broadcast to \(Console.count(broadcastExpected)) in the main hub", alertAudience: expected,
                aloneSeconds: aloneRun.seconds, duringSeconds: measured.alertSeconds,
                loadSecondsAfterAlert: measured.broadcastSecondsAfterAlert, alertDelivered: measured.alertDelivered,
                loadAudience: broadcastExpected, loadDelivered: measured.broadcastDelivered))
        Console.say(
            "  isolation: the other hub's alert \(Console.fixed(measured.alertSeconds, 2)) s during the broadcast, \(Console.fixed(aloneRun.seconds, 2)) s alone"
        )
        guard options.isolationFlood > 0 else { return rows }

        // The flood: small pipelines from two connections, as many API processes writing
        // registrations through would send them.
        let flood = SeedPopulation(
            count: options.isolationFlood, seed: phase.population.seed &+ 0xF100_D000, latencyUsers: 0, hub: Self.floodHub)
        let floodLayout = configuration.layout.hub(Self.floodHub)
        keyPrefix(floodLayout.hubPrefix)
        let seeder = PopulationSeeder(
            population: flood, layout: floodLayout, redis: configuration.redis, path: .lua, batchSize: 50, threads: 2, logger: logger)
        let running = StopFlag()
        let flooding = Task {
            // Set when it fails too: the error is thrown where the flood is awaited.
            defer { running.set() }
            let summary = try await seeder.seed { _ in running.set() }
            return (summary: summary, ended: Date())
        }
        // The first progress report comes after about a second of writing: the flood is at speed.
        while !running.isSet { try await Task.sleep(for: .milliseconds(10)) }
        var duringFlood = alone
        duringFlood.id = "\(prefix)-other-hub-flood"
        let alertId = duringFlood.id ?? ""
        let published = Date()
        do {
            _ = try await publisher.publish(duringFlood, now: published)
            let alertCommits = try await awaitCommits(eventId: alertId, timeout: timeout)
            let (summary, ended) = try await flooding.value
            _ = try await awaitDeliveries(eventId: alertId, expected: expected, timeout: timeout)
            // Anything beyond the expected count (a duplicate) arrives right behind the rest.
            try await Task.sleep(for: .milliseconds(500))
            let seconds = max(0, (alertCommits.lastCommitted ?? published).timeIntervalSince(published))
            Console.say(
                "  isolation: the other hub's alert \(Console.fixed(seconds, 2)) s during a flood of \(Console.count(summary.registrations)) registrations (\(Console.count(Int(summary.perSecond)))/s)"
            )
            rows.append(
                BenchmarkReport.HubIsolation(
                    load: "a flood of \(Console.count(summary.registrations)) registrations into a third hub",
                    alertAudience: expected, aloneSeconds: aloneRun.seconds, duringSeconds: seconds,
                    loadSecondsAfterAlert: max(0, ended.timeIntervalSince(published)), alertDelivered: watcher.stats(alertId).count,
                    loadAudience: nil, loadDelivered: nil))
        } catch {
            flooding.cancel()
            _ = try? await flooding.value
            throw error
        }
        return rows
    }

    /// The frequency-cap rows: the phase's population seeded again into a hub capped by `rules`,
    /// then `pairs` bulk broadcasts to the default hub (no caps) and to the capped one, one after
    /// the other, so each pair shares the machine's state of the moment. Every capped broadcast
    /// reads the alert bitmaps of the ones before it in every slot and records its own.
    func capPairs(rules: String, pairs: Int, expected: Int, keyPrefix: (String) -> Void) async throws -> [BenchmarkReport.Fanout] {
        let configuration = phase.configuration
        let caps: [FrequencyCap]
        do { caps = try FrequencyCap.parseList(rules) } catch {
            throw BenchmarkError("the frequency-cap rules \"\(rules)\" cannot be read: \(error)")
        }
        try await createHubs([HubDefinition(name: Self.cappedHub, policies: HubDefinition.defaultPolicies(), frequencyCaps: caps)])
        let population = phase.population
        let capped = SeedPopulation(
            count: population.count, seed: population.seed, latencyUsers: population.latencyUsers,
            templateVariants: population.templateVariants, hub: Self.cappedHub)
        let layout = configuration.layout.hub(Self.cappedHub)
        keyPrefix(layout.hubPrefix)
        let seeded = try await PopulationSeeder(
            population: capped, layout: layout, redis: configuration.redis, path: options.seedPath, batchSize: options.seedBatch,
            threads: options.seedThreads, logger: phase.environment.logger
        ).seed()
        Console.say(
            "  seeded the \(Console.count(seeded.registrations)) registrations again into hub \(Self.cappedHub) (\(rules)) in \(Console.fixed(seeded.seconds)) s"
        )
        _ = try await RedisBackgroundWork.waitUntilIdle(configuration.redis)
        let prefix = phase.names.redisPrefix
        var rows: [BenchmarkReport.Fanout] = []
        for index in 1...pairs {
            var plain = BenchmarkEvents.broadcast(id: "\(prefix)-uncapped-\(index)")
            plain.urgency = .bulk
            rows.append(try await fanout(label: PopulationPhase.capsLabel(index, rules: nil), event: plain, expected: expected))
            var limited = BenchmarkEvents.broadcast(id: "\(prefix)-capped-\(index)")
            limited.urgency = .bulk
            limited.hub = Self.cappedHub
            rows.append(try await fanout(label: PopulationPhase.capsLabel(index, rules: rules), event: limited, expected: expected))
        }
        return rows
    }

    /// Creates `hubs` on the phase's hubs topic, as `PUT /v1/hubs/{hub}` does; the planners
    /// read the topic again when an event names a hub they do not know.
    private func createHubs(_ hubs: [HubDefinition]) async throws {
        let configuration = phase.configuration
        var settings = KafkaProducerConfiguration(bootstrapServers: configuration.bootstrapServers)
        settings.lingerMs = 0
        settings.extra = configuration.kafkaExtra
        let producer = try KafkaProducer(configuration: settings, logger: phase.environment.logger)
        let directory = HubDirectory(
            topic: configuration.topics.hubs, bootstrapServers: configuration.bootstrapServers, extra: configuration.kafkaExtra,
            producer: producer, logger: phase.environment.logger)
        do {
            for hub in hubs { try await directory.put(hub) }
        } catch {
            await producer.shutdown()
            throw error
        }
        await producer.shutdown()
    }
}
