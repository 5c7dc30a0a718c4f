import Foundation
import HeraldDomain
import HeraldKafka
import HeraldPipeline
import HeraldRedis
import HeraldRegistry
import HeraldStreams
import Logging
import Synchronization

/// Many schedules due in the same second: how late the scheduler releases them.
///
/// A planner worker and a scheduler worker (separate processes, so the scheduler's memory and
/// CPU are its own) run on topics and a Redis prefix of their own. The phase publishes
/// `count` events whose `sendAt` is the same whole second, `lead` seconds ahead, waits until
/// the scheduler's index holds them all, and then reads `herald.events` with a
/// `read_committed` consumer: each released event (the `herald-release` header) is late by
/// the moment the consumer saw it minus its `sendAt`, and by its record's timestamp (stamped
/// when the scheduler enqueued it, before the commit) minus its `sendAt`.
///
/// The events' audience is a tag no device has, so what the planner does with the released
/// events costs little; the phase measures the scheduler, not the fan-out.
struct SchedulePhase {
    let count: Int
    let leadSeconds: Int
    let names: BenchmarkNames
    let configuration: PipelineConfiguration
    let options: BenchmarkOptions
    let environment: BenchmarkEnvironment

    private var logger: Logger { environment.logger }

    func run() async throws -> BenchmarkReport.Schedules {
        Console.say(
            "== \(Console.count(count)) schedules due in the same second: topics \(names.topicPrefix)*, Redis prefix \(names.redisPrefix)")
        var workers: [WorkerProcess] = []
        var watcher: ReleaseWatcher?
        var publisher: EventPublisher?
        let pool = RedisConnectionPool(configuration: configuration.redis, size: 2, logger: logger)
        func cleanUp() async {
            for worker in workers { await worker.stop() }
            await watcher?.stop()
            await publisher?.shutdown()
            watcher = nil
            publisher = nil
            pool.shutdown()
            await removeData()
        }
        do {
            try await TopicProvisioner(
                topics: configuration.topics, bootstrapServers: configuration.bootstrapServers, extra: configuration.kafkaExtra,
                logger: logger
            ).provision()
            // No registrations: the index is whole and empty, so released events plan at once.
            _ = try await RegistrationIndex(pool: pool, layout: configuration.layout, logger: logger).markBuilt()
            let releases = try ReleaseWatcher(configuration: configuration, logger: logger)
            watcher = releases
            releases.start()
            let events = try EventPublisher(
                bootstrapServers: configuration.bootstrapServers, topics: configuration.topics, extra: configuration.kafkaExtra,
                logger: logger)
            publisher = events
            for (index, roles) in ["planner", "scheduler"].enumerated() {
                let spec = WorkerSpec(names: names, index: index, roles: roles)
                workers.append(
                    try WorkerProcess(launch: environment.workerLaunch(spec), spec: spec, logDirectory: environment.workDirectory))
            }
            let scheduler = workers[1]
            Console.say("  started a planner (pid \(workers[0].pid)) and a scheduler (pid \(scheduler.pid))")
            let reader = ScheduleReader(pool: pool, layout: configuration.layout, partitions: configuration.topics.scheduledPartitions)
            try await warmUp(events, releases: releases, reader: reader, workers: workers)

            // The measured schedules: all due at the same whole second.
            let releaseAt = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + Double(leadSeconds)).rounded(.down))
            let baselineRSS = scheduler.rssBytes ?? 0
            let publishStarted = ContinuousClock.now
            try await publishAll(events, releaseAt: releaseAt)
            let published = (ContinuousClock.now - publishStarted).seconds
            Console.say("  published \(Console.count(count)) schedules in \(Console.fixed(published, 2)) s, due at \(releaseAt)")
            while try await reader.dueCount() < count {
                try check(workers)
                guard Date() < releaseAt else {
                    let indexed = try await reader.dueCount()
                    throw BenchmarkError(
                        "only \(indexed) of \(count) schedules were in the scheduler's index when they fell due; give them more time with --schedule-lead (now \(leadSeconds) s)",
                        code: "schedules_not_indexed")
                }
                try await Task.sleep(for: .milliseconds(20))
            }
            let indexed = (ContinuousClock.now - publishStarted).seconds
            let secondsBeforeDue = releaseAt.timeIntervalSinceNow
            Console.say(
                "  all \(Console.count(count)) in the scheduler's index \(Console.fixed(indexed, 2)) s after the first publish, \(Console.fixed(secondsBeforeDue, 1)) s before they fall due"
            )
            let cpuBefore = scheduler.cpuSeconds ?? 0
            let deadline = releaseAt.addingTimeInterval(Double(options.eventTimeoutSeconds))
            while releases.releasedCount(prefix: measuredPrefix) < count && Date() < deadline {
                try check(workers)
                try await Task.sleep(for: .milliseconds(50))
            }
            let sample = releases.sample(prefix: measuredPrefix)
            let seen = Percentiles(sample.map { $0.seen.timeIntervalSince(releaseAt) * 1_000 })
            let stamped = Percentiles(sample.compactMap { $0.stamped.map { $0.timeIntervalSince(releaseAt) * 1_000 } })
            let result = BenchmarkReport.Schedules(
                schedules: count, leadSeconds: leadSeconds, publishSeconds: published, indexedSeconds: indexed,
                released: sample.count, duplicates: releases.duplicates, early: sample.filter { $0.seen < releaseAt }.count,
                seenP50Milliseconds: seen.value(50), seenP99Milliseconds: seen.value(99), seenMaxMilliseconds: seen.max,
                stampedP50Milliseconds: stamped.value(50), stampedP99Milliseconds: stamped.value(99),
                stampedMaxMilliseconds: stamped.max,
                schedulerBaselineRSSBytes: baselineRSS, schedulerPeakRSSBytes: scheduler.peakRSSBytes ?? 0,
                schedulerCPUSeconds: (scheduler.cpuSeconds ?? 0) - cpuBefore
            )
            Console.say(
                "  released \(Console.count(result.released)) / \(Console.count(count)): late by p50 \(Console.fixed(result.seenP50Milliseconds, 0)) / p99 \(Console.fixed(result.seenP99Milliseconds, 0)) / max \(Console.fixed(result.seenMaxMilliseconds, 0)) ms as seen; scheduler RSS \(Console.fixed(Double(result.schedulerPeakRSSBytes) / 1_048_576, 0)) MB"
            )
            await cleanUp()
            return result
        } catch {
            for worker in workers where !worker.isRunning {
                Console.say("worker \(worker.spec.instanceId) exited; last log lines (\(worker.logFile.path)):\n\(worker.logTail())")
            }
            await cleanUp()
            throw error
        }
    }

    private var measuredPrefix: String { "\(names.redisPrefix)-s" }

    /// One schedule a few seconds ahead, released and seen: both workers are in their groups,
    /// the scheduler owns every partition, and the planner plans released events.
    private func warmUp(_ events: EventPublisher, releases: ReleaseWatcher, reader: ScheduleReader, workers: [WorkerProcess]) async throws {
        let deadline = ContinuousClock.now + .seconds(options.warmupTimeoutSeconds)
        let partitions = Int(configuration.topics.scheduledPartitions)
        while try await reader.builtPartitions().count < partitions {
            try check(workers)
            guard ContinuousClock.now < deadline else {
                throw BenchmarkError("the scheduler did not take every partition within \(options.warmupTimeoutSeconds) s", code: "warmup")
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        let id = "\(names.redisPrefix)-warmup"
        try await events.publish(event(id: id, releaseAt: Date().addingTimeInterval(2)))
        while releases.releasedCount(prefix: id) == 0 {
            try check(workers)
            guard ContinuousClock.now < deadline else {
                throw BenchmarkError(
                    "the warm-up schedule was not released within \(options.warmupTimeoutSeconds) s", code: "warmup")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    private func event(id: String, releaseAt: Date) -> NotificationEvent {
        let tag = "bench-scheduled"
        var event = NotificationEvent(
            id: id, audience: .expression(.tag(tag), source: tag), properties: BenchmarkEvents.properties,
            native: BenchmarkEvents.native)
        event.schedule = .at(releaseAt)
        return event
    }

    /// Publishes the measured schedules, many in flight at once.
    private func publishAll(_ events: EventPublisher, releaseAt: Date) async throws {
        let inFlight = 256
        let width = String(count - 1).count
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<count {
                if index >= inFlight { try await group.next() }
                let number = String(index)
                let id = measuredPrefix + String(repeating: "0", count: width - number.count) + number
                let event = event(id: id, releaseAt: releaseAt)
                group.addTask { _ = try await events.publish(event) }
            }
            try await group.waitForAll()
        }
    }

    private func check(_ workers: [WorkerProcess]) throws {
        if let dead = workers.first(where: { !$0.isRunning }) {
            throw BenchmarkError("worker \(dead.spec.instanceId) (\(dead.spec.roles)) exited", code: "worker_exited")
        }
    }

    private func removeData() async {
        await PhaseData.remove(names: names, configuration: configuration, options: options, logger: logger)
    }
}

/// Reads `herald.events` (`read_committed`) and notes when each released event was first seen.
final class ReleaseWatcher: Sendable {
    struct Release: Sendable {
        /// When this process's consumer was handed the record.
        var seen: Date
        /// The record's timestamp: when the scheduler's producer created it.
        var stamped: Date?
    }

    private let consumer: KafkaConsumer
    private let state = Mutex<(releases: [String: Release], duplicates: Int)>(([:], 0))
    private let stopping = Atomic<Bool>(false)
    private let loop = Mutex<Task<Void, Never>?>(nil)
    private let logger: Logger

    init(configuration: PipelineConfiguration, logger: Logger) throws {
        var consumerConfiguration = KafkaConsumerConfiguration(bootstrapServers: configuration.bootstrapServers)
        consumerConfiguration.clientId = "herald-bench-releases"
        consumerConfiguration.isolationLevel = .readCommitted
        consumerConfiguration.maxPollRecords = 1_000
        consumerConfiguration.fetchWaitMaxMs = 5
        consumerConfiguration.extra = configuration.kafkaExtra
        consumer = try KafkaConsumer(configuration: consumerConfiguration, logger: logger)
        let topic = configuration.topics.events
        try consumer.assign(
            (0..<configuration.topics.eventsPartitions).map {
                KafkaTopicPartitionOffset(topic: topic, partition: $0, offset: KafkaTopicPartitionOffset.beginning)
            })
        self.logger = logger
    }

    func start() {
        let task = Task { [self] in
            while !stopping.load(ordering: .relaxed) {
                do {
                    let batch = try await consumer.pollBatch(maxMessages: 1_000, timeout: .milliseconds(50))
                    guard !batch.isEmpty else { continue }
                    let now = Date()
                    state.withLock { state in
                        for message in batch where message.headers.contains(where: { $0.key == EventPlanner.releaseHeader }) {
                            guard let key = message.key.map({ String(decoding: $0, as: UTF8.self) }) else { continue }
                            if state.releases[key] == nil {
                                state.releases[key] = Release(seen: now, stamped: message.timestamp)
                            } else {
                                state.duplicates += 1
                            }
                        }
                    }
                } catch {
                    if stopping.load(ordering: .relaxed) { break }
                    logger.warning("release watcher poll failed", metadata: ["error": "\(error)"])
                    try? await Task.sleep(for: .milliseconds(50))
                }
            }
        }
        loop.withLock { $0 = task }
    }

    func stop() async {
        stopping.store(true, ordering: .relaxed)
        if let task = loop.withLock({ $0 }) { await task.value }
        try? await consumer.close()
    }

    /// Released events whose id starts with `prefix`.
    func releasedCount(prefix: String) -> Int {
        state.withLock { $0.releases.keys.count { $0.hasPrefix(prefix) } }
    }

    func sample(prefix: String) -> [Release] {
        state.withLock { $0.releases.filter { $0.key.hasPrefix(prefix) }.map(\.value) }
    }

    /// Release records seen again for an id already seen (an aborted transaction's records,
    /// which the embedded broker shows to `read_committed` readers, or a release done twice).
    var duplicates: Int { state.withLock { $0.duplicates } }
}
