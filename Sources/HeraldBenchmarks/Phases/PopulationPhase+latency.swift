import Foundation
import HeraldDomain
import HeraldKafka
import HeraldPipeline
import HeraldRedis
import HeraldRegistry
import HeraldStreams

extension PopulationPhase.Context {
    /// The one-recipient stream while `fanouts` (label, event, expected deliveries) run one
    /// after the other; only the events published while one of them was fanning out (from
    /// its publish to its last delivery) are counted, not those of the pauses between.
    func targetedWhile(
        label: String, fanouts: [(label: String, event: NotificationEvent, expected: Int)]
    ) async throws -> (BenchmarkReport.Latency, [BenchmarkReport.Fanout]) {
        let done = StopFlag()
        let windows = FanoutWindows()
        async let stream = targetedStream(label: label, stop: done, windows: windows)
        var runs: [BenchmarkReport.Fanout] = []
        do {
            for fanout in fanouts {
                runs.append(
                    try await self.fanout(label: fanout.label, event: fanout.event, expected: fanout.expected, windows: windows))
            }
            done.set()
        } catch {
            done.set()
            _ = try? await stream
            throw error
        }
        return (try await stream, runs)
    }

    /// One-recipient events at `options.latencyRate` per second, for `latencySeconds` or
    /// until `stop` is set; each measured from its `publishedAt` to the moment the watcher
    /// saw its delivery.
    ///
    /// With `windows`, only the events published inside one of them are counted.
    func targetedStream(label: String, stop: StopFlag?, windows: FanoutWindows? = nil) async throws -> BenchmarkReport.Latency {
        let rate = max(1, options.latencyRate)
        let interval = Duration.seconds(1) / rate
        let limit = options.latencySeconds * rate
        let users = phase.population.latencyUsers
        let start = ContinuousClock.now
        var published: [(id: String, at: Date)] = []
        Console.say("  latency (\(label)): \(rate) one-recipient events/s")
        try await withThrowingTaskGroup(of: Void.self) { group in
            var sequence = 0
            while sequence < limit && !(stop?.isSet ?? false) {
                let event = BenchmarkEvents.targeted(id: "\(prefix)-lat-\(label)-\(sequence)", latencyUser: sequence % users)
                let at = Date()
                published.append((event.id!, at))
                group.addTask { try await publisher.publish(event, now: at) }
                sequence += 1
                try await Task.sleep(until: start + interval * sequence, clock: .continuous)
            }
            try await group.waitForAll()
        }
        let deadline = ContinuousClock.now + .seconds(30)
        while published.contains(where: { watcher.stats($0.id).count == 0 }) && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        if let windows { published = published.filter { windows.contains($0.at) } }
        // Per event, in publish order: publish to seen, to rendered (the worker's clock), to
        // accepted (the planner's status).
        let seenEach = published.map { entry in
            watcher.stats(entry.id).firstSeen.map { $0.timeIntervalSince(entry.at) * 1_000 }
        }
        let renderedEach = published.map { entry -> Double? in
            guard let bytes = watcher.stats(entry.id).firstRecord,
                let record = try? JSONDecoder().decode(DeliveryRecord.self, from: Data(bytes))
            else { return nil }
            return record.renderedAt.timeIntervalSince(entry.at) * 1_000
        }
        let acceptedEach = await acceptedMilliseconds(published)
        let latencies = seenEach.compactMap { $0 }
        let toRendered = renderedEach.compactMap { $0 }
        let toAccepted = acceptedEach.compactMap { $0 }
        let firstPublish = published.first?.at ?? Date()
        let samples = published.indices.map { index in
            BenchmarkReport.LatencySample(
                publishedSeconds: published[index].at.timeIntervalSince(firstPublish),
                acceptedMilliseconds: acceptedEach[index], renderedMilliseconds: renderedEach[index],
                seenMilliseconds: seenEach[index]
            )
        }
        let percentiles = Percentiles(latencies)
        let rendered = Percentiles(toRendered)
        let accepted = Percentiles(toAccepted)
        let result = BenchmarkReport.Latency(
            label: label, events: published.count, seen: latencies.count,
            p50Milliseconds: percentiles.value(50), p99Milliseconds: percentiles.value(99), maxMilliseconds: percentiles.max,
            renderedP50Milliseconds: toRendered.isEmpty ? nil : rendered.value(50),
            renderedP99Milliseconds: toRendered.isEmpty ? nil : rendered.value(99),
            acceptedP50Milliseconds: toAccepted.isEmpty ? nil : accepted.value(50),
            acceptedP99Milliseconds: toAccepted.isEmpty ? nil : accepted.value(99),
            samples: samples
        )
        Console.say(
            "  latency (\(label)): \(latencies.count)/\(published.count) seen, p50 \(Console.fixed(result.p50Milliseconds)) ms, p99 \(Console.fixed(result.p99Milliseconds)) ms, max \(Console.fixed(result.maxMilliseconds)) ms; publish to accepted p50 \(Console.fixed(accepted.value(50))) / p99 \(Console.fixed(accepted.value(99))) ms, to rendered p50 \(Console.fixed(rendered.value(50))) / p99 \(Console.fixed(rendered.value(99))) ms"
        )
        // The slowest events, to tell a slow planner (accepted), a slow worker (rendered) and
        // a late read (seen) apart, and where in the phase they were.
        for sample in samples.sorted(by: { ($0.seenMilliseconds ?? .infinity) > ($1.seenMilliseconds ?? .infinity) }).prefix(3) {
            Console.say(
                "    slowest: published at +\(Console.fixed(sample.publishedSeconds, 2)) s, accepted \(sample.acceptedMilliseconds.map { Console.fixed($0) } ?? "-") / rendered \(sample.renderedMilliseconds.map { Console.fixed($0) } ?? "-") / seen \(sample.seenMilliseconds.map { Console.fixed($0) } ?? "never") ms"
            )
        }
        return result
    }

    /// Publish to the planner's `acceptedAt` of each event, nil where its status is missing.
    private func acceptedMilliseconds(_ published: [(id: String, at: Date)]) async -> [Double?] {
        let pool = RedisConnectionPool(configuration: phase.configuration.redis, size: 1)
        defer { pool.shutdown() }
        let reader = StatusReader(pool: pool, layout: phase.configuration.layout)
        var result: [Double?] = []
        for entry in published {
            let status = try? await reader.status(eventId: entry.id)
            result.append(status.map { $0.timings.acceptedAt.timeIntervalSince(entry.at) * 1_000 })
        }
        return result
    }
}
