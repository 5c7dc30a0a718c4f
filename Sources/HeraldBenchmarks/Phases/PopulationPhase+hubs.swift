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
    /// then while a third hub takes a flood of new registrations through the API's write path
    /// (at most `options.isolationFlood`), each in `options.isolationPairs` pairs with the alert
    /// alone right before. The hubs share the workers, the broker and Redis.
    ///
    /// `cleanUp` is told each Redis key prefix and topic to be removed with the phase's.
    func hubIsolation(broadcastExpected: Int, cleanUp: @escaping @Sendable (PhaseLeftover) -> Void) async throws
        -> [BenchmarkReport.HubIsolation]
    {
        let prefix = phase.names.redisPrefix
        let timeout = Duration.seconds(options.eventTimeoutSeconds)
        try await createHubs(
            [Self.alertHub, options.isolationFlood > 0 ? Self.floodHub : nil].compactMap { name in
                name.map { HubDefinition(name: $0, policies: HubDefinition.defaultPolicies()) }
            })

        let audience = SeedPopulation(
            count: options.isolationAudience, seed: phase.population.seed &+ 0x5B0A_7500, latencyUsers: 0, hub: Self.alertHub)
        try await seed(audience, cleanUp: cleanUp)

        var alert = BenchmarkEvents.broadcast(id: "\(prefix)-other-hub")
        alert.hub = Self.alertHub
        alert.urgency = .breaking
        let expected = audience.expectedDeliveries(for: [alert])[0]
        func event(_ name: String, _ pair: Int) -> NotificationEvent {
            var event = alert
            event.id = "\(prefix)-other-hub-\(name)-\(pair)"
            return event
        }
        // A breaking alert's deliveries go to the express lanes' partitions.
        try watcher.readPriorityPartitions(true)
        var rows: [BenchmarkReport.HubIsolation] = []
        // Each pair times the alert alone right before the same alert under load, so both share
        // the machine's state of the moment.
        let pairs = max(1, options.isolationPairs)
        for pair in 1...pairs {
            let alone = try await fanout(label: "another hub's breaking alert alone", event: event("alone", pair), expected: expected)
            let busy = BenchmarkEvents.broadcast(id: "\(prefix)-busy-hub-\(pair)")
            let measured = try await self.alert(
                event("broadcast", pair), expected: expected, duringBroadcast: busy, broadcastExpected: broadcastExpected)
            rows.append(
                BenchmarkReport.HubIsolation(
                    load: "a broadcast to \(Console.count(broadcastExpected)) in the main hub", alertAudience: expected,
                    aloneSeconds: alone.seconds, duringSeconds: measured.alertSeconds,
                    loadSecondsAfterAlert: measured.broadcastSecondsAfterAlert, alertDelivered: measured.alertDelivered,
                    loadAudience: broadcastExpected, loadDelivered: measured.broadcastDelivered, pair: pair))
            Console.say(
                "  isolation \(pair): the other hub's alert \(Console.fixed(measured.alertSeconds, 2)) s during the broadcast, \(Console.fixed(alone.seconds, 2)) s alone"
            )
        }
        guard options.isolationFlood > 0 else { return rows }
        for pair in 1...pairs {
            let alone = try await fanout(label: "another hub's breaking alert alone", event: event("alone-flood", pair), expected: expected)
            rows.append(
                try await duringFlood(
                    event("flood", pair), expected: expected, alone: alone.seconds, pair: pair, timeout: timeout, cleanUp: cleanUp))
        }
        return rows
    }

    /// `alert` published once a flood of registrations into `floodHub` has run for a second,
    /// timed to its last task's commit; the flood stops then.
    private func duringFlood(
        _ alert: NotificationEvent, expected: Int, alone: Double, pair: Int, timeout: Duration,
        cleanUp: @escaping @Sendable (PhaseLeftover) -> Void
    ) async throws -> BenchmarkReport.HubIsolation {
        // Registrations written through the API's own write path (version reserved, the record
        // acknowledged by the broker, the change written through to Redis), as many at once as a
        // busy API process has requests in flight, into a third hub.
        let flood = try await RegistrationFlood(
            phase: phase, hub: Self.floodHub, population: options.isolationFlood, concurrency: 64, cleanUp: cleanUp)
        let writing = Task { try await flood.run() }
        do {
            let head = try await flood.waitUntilWriting(for: .seconds(1), timeout: timeout)
            let alertId = alert.id ?? ""
            let published = Date()
            let writtenBefore = flood.written
            _ = try await publisher.publish(alert, now: published)
            let alertCommits = try await awaitCommits(eventId: alertId, timeout: timeout)
            let committed = alertCommits.lastCommitted ?? published
            let writtenDuring = flood.written - writtenBefore
            flood.stop()
            let summary = try await writing.value
            _ = try await awaitDeliveries(eventId: alertId, expected: expected, timeout: timeout)
            // Anything beyond the expected count (a duplicate) arrives right behind the rest.
            try await Task.sleep(for: .milliseconds(500))
            let seconds = max(0, committed.timeIntervalSince(published))
            let during = Double(writtenDuring) / max(seconds, 1e-9)
            Console.say(
                "  isolation \(pair): the other hub's alert \(Console.fixed(seconds, 2)) s during a flood of registrations, \(Console.fixed(alone, 2)) s alone (\(Console.count(Int(head))) writes/s before it, \(Console.count(Int(during)))/s while it ran; \(Console.count(flood.yielded)) writes waited for it)"
            )
            return BenchmarkReport.HubIsolation(
                load: "a flood of registrations into a third hub through the API's write path", alertAudience: expected,
                aloneSeconds: alone, duringSeconds: seconds, loadSecondsAfterAlert: max(0, summary.ended.timeIntervalSince(published)),
                alertDelivered: watcher.stats(alertId).count, loadAudience: nil, loadDelivered: nil, loadPerSecondBefore: head,
                loadPerSecondDuring: during, pair: pair)
        } catch {
            flood.stop()
            _ = try? await writing.value
            throw error
        }
    }

    /// The frequency-cap rows: the phase's population seeded again into a hub capped by `rules`,
    /// then `pairs` bulk broadcasts to the default hub (no caps) and to the capped one, one after
    /// the other, so each pair shares the machine's state of the moment. Every capped broadcast
    /// reads the alert bitmaps of the ones before it in every slot and records its own.
    func capPairs(rules: String, pairs: Int, expected: Int, cleanUp: (PhaseLeftover) -> Void) async throws -> [BenchmarkReport.Fanout] {
        let caps: [FrequencyCap]
        do { caps = try FrequencyCap.parseList(rules) } catch {
            throw BenchmarkError("the frequency-cap rules \"\(rules)\" cannot be read: \(error)")
        }
        try await createHubs([HubDefinition(name: Self.cappedHub, policies: HubDefinition.defaultPolicies(), frequencyCaps: caps)])
        let population = phase.population
        let capped = SeedPopulation(
            count: population.count, seed: population.seed, latencyUsers: population.latencyUsers,
            templateVariants: population.templateVariants, hub: Self.cappedHub)
        try await seed(capped, cleanUp: cleanUp)
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

    /// Seeds `population` into its hub's keys (told to `cleanUp`) and waits for Redis's
    /// background rewrite of them to end.
    private func seed(_ population: SeedPopulation, cleanUp: (PhaseLeftover) -> Void) async throws {
        let configuration = phase.configuration
        let layout = configuration.layout.hub(population.hub)
        cleanUp(.keys(prefix: layout.hubPrefix))
        let seeded = try await PopulationSeeder(
            population: population, layout: layout, redis: configuration.redis, path: options.seedPath, batchSize: options.seedBatch,
            threads: options.seedThreads, logger: phase.environment.logger
        ).seed()
        Console.say(
            "  seeded \(Console.count(seeded.registrations)) registrations of hub \(population.hub) in \(Console.fixed(seeded.seconds)) s"
        )
        _ = try await RedisBackgroundWork.waitUntilIdle(configuration.redis)
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
