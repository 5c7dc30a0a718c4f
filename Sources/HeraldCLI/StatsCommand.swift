import ArgumentParser
import Foundation
import HeraldApp
import HeraldCommandLine
import HeraldDomain
import HeraldPipeline
import HeraldStreams

/// `herald stats`: per event, what the log says happened (statuses, deliveries by platform and
/// template, skips by reason, push outcomes, publish-to-render and publish-to-pushed latency),
/// read from the status, delivery and receipt topics with read_committed, never from Redis.
struct StatsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Per-event delivery and push statistics from the status, delivery and receipt topics (not from Redis).",
        discussion: "herald stats --event bn-2026-11-21-0001\nherald stats --json --no-deliveries"
    )

    @OptionGroup var options: SettingsOptions
    @Option(help: "Only this event.") var event: String?
    @Flag(inversion: .prefixedNo, help: "Read the deliveries topic too, for record counts and latency percentiles.") var deliveries = true
    @Flag(inversion: .prefixedNo, help: "Read the receipts topic too, for push outcomes and publish-to-pushed latency.") var receipts = true
    @Flag(help: "Print JSON (one object with an events array) instead of a table.") var json = false

    func run() async throws {
        let settings = options.settings()
        let topics = try settings.topics
        let extra = try settings.kafkaProperties()
        let statistics = try await EventStatistics.read(
            topics: topics, bootstrapServers: settings[.kafkaBrokers], extra: extra, eventId: event, deliveries: deliveries,
            receipts: receipts
        )
        let events = statistics.events().filter { event == nil || $0.eventId == event }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(["events": events]), as: UTF8.self))
            return
        }
        guard !events.isEmpty else {
            throw CommandFailure(event.map { "no status for event \($0) on \(topics.status)" } ?? "no statuses on \(topics.status)")
        }
        for item in events {
            print(Self.describe(item, deliveriesRead: deliveries, receiptsRead: receipts))
        }
    }

    static func describe(_ item: EventStatistics.Event, deliveriesRead: Bool, receiptsRead: Bool) -> String {
        func counts(_ values: [String: Int]) -> String {
            values.isEmpty ? "-" : values.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        }
        var lines = [
            "\(item.eventId)  \(item.state)  tasks \(item.tasksCompleted)/\(item.tasksPlanned)  delivered \(item.deliveredByStatus)  skipped \(item.skipped)  not built \(item.failed)"
                + (item.durationMs.map { "  \($0) ms" } ?? ""),
            "    by platform: \(counts(item.byPlatform))",
            "    by template: \(counts(item.byTemplate))",
            "    skipped by reason: \(counts(item.skippedByReason))",
        ]
        if deliveriesRead {
            lines.append("    delivery records: \(item.deliveryRecords)" + percentiles("publish to render", item.latencyMs))
        }
        if receiptsRead {
            let outcomes =
                item.pushed.isEmpty
                ? "-"
                : item.pushed.sorted { $0.key < $1.key }.map { platform, counts in
                    "\(platform) " + counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: " ")
                }.joined(separator: "; ")
            lines.append(
                "    pushed: \(outcomes)  (push failures \(item.pushFailures))" + percentiles("publish to pushed", item.pushedLatencyMs))
        }
        return lines.joined(separator: "\n")
    }

    /// "  <interval> p50 … ms", or nothing without samples.
    private static func percentiles(_ interval: String, _ latency: EventStatistics.Percentiles?) -> String {
        guard let latency else { return "" }
        return "  \(interval) "
            + String(format: "p50 %.1f  p90 %.1f  p99 %.1f  max %.1f ms", latency.p50, latency.p90, latency.p99, latency.max)
    }
}
