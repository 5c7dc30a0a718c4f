import Foundation
import HeraldDomain
import HeraldKafka
import HeraldPipeline
import HeraldRedis
import HeraldRegistry
import HeraldStreams

extension PopulationPhase.Context {
    /// Publishes `event` (a broadcast), and once its first task has reported sets its stop key
    /// as `DELETE /v1/notifications/{id}` does: how long until every task reported, and what
    /// got through.
    func stopInFlight(_ event: NotificationEvent, expected: Int) async throws -> BenchmarkReport.Stop {
        let eventId = event.id ?? ""
        _ = try await publisher.publish(event)
        let deadline = ContinuousClock.now + .seconds(options.eventTimeoutSeconds)
        while commits.commits(eventId).tasks.isEmpty {
            guard ContinuousClock.now < deadline else {
                throw BenchmarkError("no task of \(eventId) reported within \(options.eventTimeoutSeconds) s", code: "fanout_timeout")
            }
            try await Task.sleep(for: .milliseconds(2))
        }
        let pool = RedisConnectionPool(configuration: phase.configuration.redis, size: 1)
        defer { pool.shutdown() }
        let key = phase.configuration.layout.stopKey(eventId: eventId)
        let before = commits.commits(eventId)
        let stoppedAt = Date()
        _ = try await pool.withConnection { try await $0.send(RedisCommand("SET", key, "1", "EX", "600")) }
        let after = try await awaitCommits(eventId: eventId, timeout: .seconds(options.eventTimeoutSeconds))
        Console.say(
            "  stopped \(eventId) after \(before.tasks.count) of \(after.taskCount ?? 0) tasks: \(Console.count(after.delivered)) of \(Console.count(expected)) delivered"
        )
        return BenchmarkReport.Stop(
            audience: expected, tasks: after.taskCount ?? 0, tasksBeforeStop: before.tasks.count, deliveredBeforeStop: before.delivered,
            secondsToLastReport: max(0, (after.lastCommitted ?? stoppedAt).timeIntervalSince(stoppedAt)), delivered: after.delivered,
            stoppedTasks: after.stopped)
    }

    /// Publishes `event` as a rehearsal (`dryRun`): from the publish to its last task's report,
    /// and what its status counted.
    func rehearsal(_ event: NotificationEvent, expected: Int) async throws -> BenchmarkReport.Rehearsal {
        _ = await phase.meter.waitForQuiet(workers: workers)
        let published = Date()
        let receipt = try await publisher.publish(event, now: published, rehearsal: true)
        let id = DerivedSend.rehearsal.eventId(of: receipt.eventId, partition: receipt.partition, offset: receipt.offset)
        let commits = try await awaitCommits(eventId: id, timeout: .seconds(options.eventTimeoutSeconds))
        let status = await finalStatuses([id]).first
        let pool = RedisConnectionPool(configuration: phase.configuration.redis, size: 1)
        defer { pool.shutdown() }
        let previews = try await StatusReader(pool: pool, layout: phase.configuration.layout).previews(eventId: id)
        let result = BenchmarkReport.Rehearsal(
            audience: expected, counted: status?.targets.total ?? commits.delivered, tasks: commits.taskCount ?? 0,
            seconds: max(0, (commits.lastCommitted ?? published).timeIntervalSince(published)), previews: previews.count)
        Console.say("  rehearsal \(id): \(Console.count(result.counted)) counted in \(Console.fixed(result.seconds, 2)) s")
        return result
    }

    /// `breaking.alone` with nothing else running, then the `bulk` broadcast, and once its
    /// first task has reported `breaking.during` (the same event under another id): each
    /// timed from its publish to its last task's commit, and every delivery counted.
    func preemption(
        bulk: NotificationEvent, bulkExpected: Int, breaking: (alone: NotificationEvent, during: NotificationEvent),
        breakingExpected: Int
    ) async throws -> BenchmarkReport.Preemption {
        // The breaking deliveries go to the express lanes' partitions.
        try watcher.readPriorityPartitions(true)
        let alone = try await fanout(label: "breaking alone", event: breaking.alone, expected: breakingExpected)
        let during = try await alert(
            breaking.during, expected: breakingExpected, duringBroadcast: bulk, broadcastExpected: bulkExpected)
        let result = BenchmarkReport.Preemption(
            breakingAudience: breakingExpected, bulkAudience: bulkExpected, aloneSeconds: alone.seconds,
            duringSeconds: during.alertSeconds, bulkSeconds: during.broadcastSeconds, breakingDelivered: during.alertDelivered,
            bulkDelivered: during.broadcastDelivered)
        Console.say(
            "  preemption: breaking \(Console.fixed(result.duringSeconds, 2)) s during the bulk broadcast, \(Console.fixed(result.aloneSeconds, 2)) s alone"
        )
        return result
    }

    /// What `alert(_:expected:duringBroadcast:broadcastExpected:)` measured.
    struct AlertDuringBroadcast {
        /// Publish to the last task's commit of the alert, and of the broadcast.
        var alertSeconds: Double
        var broadcastSeconds: Double
        /// From the alert's publish to the broadcast's last commit.
        var broadcastSecondsAfterAlert: Double
        var alertDelivered: Int
        var broadcastDelivered: Int
    }

    /// Publishes `broadcast`, and once its first task has reported `alert`: each timed from
    /// its publish to its last task's commit, then every delivery of both counted.
    func alert(
        _ alert: NotificationEvent, expected alertExpected: Int, duringBroadcast broadcast: NotificationEvent, broadcastExpected: Int
    ) async throws -> AlertDuringBroadcast {
        let timeout = Duration.seconds(options.eventTimeoutSeconds)
        let broadcastId = broadcast.id ?? ""
        let alertId = alert.id ?? ""
        Console.say(
            "  \(broadcastId) to \(Console.count(broadcastExpected)), then \(alertId) to \(Console.count(alertExpected))")
        if options.clock == .committed { try watcher.readBulkPartitions(false) }
        _ = await phase.meter.waitForQuiet(workers: workers)
        let broadcastPublished = Date()
        _ = try await publisher.publish(broadcast, now: broadcastPublished)
        let deadline = ContinuousClock.now + timeout
        while commits.commits(broadcastId).tasks.isEmpty {
            guard ContinuousClock.now < deadline else {
                throw BenchmarkError(
                    "no task of \(broadcastId) reported within \(options.eventTimeoutSeconds) s", code: "fanout_timeout")
            }
            try await Task.sleep(for: .milliseconds(2))
        }
        let published = Date()
        _ = try await publisher.publish(alert, now: published)
        let alertCommits = try await awaitCommits(eventId: alertId, timeout: timeout)
        let broadcastCommits = try await awaitCommits(eventId: broadcastId, timeout: timeout)
        try watcher.readBulkPartitions(true)
        let alertSeen = try await awaitDeliveries(eventId: alertId, expected: alertExpected, timeout: timeout)
        let broadcastSeen = try await awaitDeliveries(eventId: broadcastId, expected: broadcastExpected, timeout: timeout)
        // Anything beyond the expected counts (a duplicate) arrives right behind the rest.
        try await Task.sleep(for: .milliseconds(500))
        let broadcastDone = broadcastCommits.lastCommitted ?? published
        return AlertDuringBroadcast(
            alertSeconds: max(0, (alertCommits.lastCommitted ?? published).timeIntervalSince(published)),
            broadcastSeconds: max(0, broadcastDone.timeIntervalSince(broadcastPublished)),
            broadcastSecondsAfterAlert: max(0, broadcastDone.timeIntervalSince(published)),
            alertDelivered: max(alertSeen.count, watcher.stats(alertId).count),
            broadcastDelivered: max(broadcastSeen.count, watcher.stats(broadcastId).count))
    }
}
