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
        if let reach = item.reach { lines += Self.reachCurve(reach, total: item.deliveredByStatus) }
        if let funnel = item.engagement {
            let sent = item.pushed.values.reduce(0) { $0 + ($1["sent"] ?? 0) }
            let rate = funnel.openRate.map { String(format: " (%.1f %% of sent)", $0 * 100) } ?? ""
            lines.append(
                "    funnel: delivered \(item.deliveredByStatus) -> sent \(sent) -> opened \(funnel.opened)\(rate), dismissed \(funnel.dismissed)"
                    + (funnel.medianTimeToOpenMs.map { ", median time to open \($0) ms" } ?? ""))
            lines.append("      opened by platform: \(counts(funnel.openedByPlatform))  by template: \(counts(funnel.openedByTemplate))")
        }
        return lines.joined(separator: "\n")
    }

    /// The reach curve as text: for each stage, the time from the publish to the first, half,
    /// 90 %, 99 % and all of the deliveries, and a bar of how far along the way each mark is.
    static func reachCurve(_ reach: Reach, total: Int) -> [String] {
        let stages: [(String, ReachCurve?)] = [("committed", reach.committed), ("sent", reach.sent)]
        let longest: Int64 = stages.compactMap { $0.1?.latestMs }.max() ?? 0
        var lines = ["    reach of \(total) deliveries, ms from publish (one bar: the time to that share)"]
        for (name, curve) in stages {
            guard let curve else { continue }
            lines.append("      \(name): \(curve.count) of \(total)")
            for (mark, value) in curve.marks {
                guard let value else {
                    lines.append("        \(mark.padding(toLength: 5, withPad: " ", startingAt: 0))  not reached")
                    continue
                }
                let width = longest > 0 ? Int((Double(value) / Double(longest) * 40).rounded()) : 0
                lines.append(
                    "        \(mark.padding(toLength: 5, withPad: " ", startingAt: 0))  \(String(repeating: "█", count: max(1, width))) \(value) ms"
                )
            }
        }
        return lines
    }

    /// "  <interval> p50 … ms", or nothing without samples.
    private static func percentiles(_ interval: String, _ latency: EventStatistics.Percentiles?) -> String {
        guard let latency else { return "" }
        return "  \(interval) "
            + String(format: "p50 %.1f  p90 %.1f  p99 %.1f  max %.1f ms", latency.p50, latency.p90, latency.p99, latency.max)
    }
}
