import ArgumentParser
import HeraldCommandLine
import Foundation
import HeraldApp
import HeraldDomain
import HeraldPipeline
import HeraldStreams

struct TailCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tail",
        abstract: "Print delivery, status, receipt or engagement records readably (read_committed).",
        discussion:
            "herald tail deliveries --event bn-2026-11-21-0001\nherald tail status --follow\nherald tail receipts --event bn-2026-11-21-0001"
    )

    enum Stream: String, ExpressibleByArgument, CaseIterable {
        case deliveries, status, receipts, engagements
    }

    @OptionGroup var options: SettingsOptions
    @Argument(help: "deliveries, status, receipts or engagements.") var stream: Stream
    @Option(help: "Only records of this event id.") var event: String?
    @Flag(help: "Keep waiting for new records.") var follow = false
    @Flag(help: "Start at the end (with --follow: only new records).") var fromEnd = false
    @Flag(help: "Print the raw JSON value, one per line.") var json = false

    func run() async throws {
        let settings = options.settings()
        let topics = try settings.topics
        var tail = RecordTail(
            topic: topic(of: stream, in: topics),
            bootstrapServers: settings[.kafkaBrokers])
        tail.extra = try settings.kafkaProperties()
        tail.eventId = event
        tail.follow = follow
        tail.start = fromEnd ? .end : .beginning
        var count = 0
        for try await message in tail.records() {
            guard let value = message.value else { continue }
            count += 1
            if json {
                print(String(decoding: value, as: UTF8.self))
            } else {
                print(readable(value, partition: message.partition, offset: message.offset))
            }
        }
        if !follow {
            var stderr = StandardError()
            print("\(count) records", to: &stderr)
        }
    }

    private func topic(of stream: Stream, in topics: HeraldTopics) -> String {
        switch stream {
        case .deliveries: topics.deliveries
        case .status: topics.status
        case .receipts: topics.receipts
        case .engagements: topics.engagements
        }
    }

    private func readable(_ value: [UInt8], partition: Int32, offset: Int64) -> String {
        let position = "[\(partition):\(offset)]"
        switch stream {
        case .deliveries:
            guard let record = try? DeliveryRecord.decode(value) else { return "\(position) " + String(decoding: value, as: UTF8.self) }
            let headers = record.headers.map { "\($0.name)=\($0.value)" }.joined(separator: " ")
            return
                "\(position) \(record.eventId) -> \(record.registrationId) \(record.platform.rawValue) [\(record.template)] \(headers)\n    \(record.payload)"
        case .receipts:
            guard let receipt = try? JSONDecoder().decode(PushReceipt.self, from: Data(value)) else {
                return "\(position) " + String(decoding: value, as: UTF8.self)
            }
            let details = [
                receipt.statusCode.map { "HTTP \($0)" }, "attempts \(receipt.attempts)", receipt.latencyMs.map { "\($0) ms" },
                receipt.reason,
            ].compactMap { $0 }.joined(separator: ", ")
            return "\(position) \(receipt.deliveryId) \(receipt.platform.rawValue) \(receipt.outcome.rawValue) (\(details))"
        case .engagements:
            guard let engagement = try? Engagement.decodeRecord(value) else {
                return "\(position) " + String(decoding: value, as: UTF8.self)
            }
            let device = [engagement.device.id, engagement.platform?.rawValue, engagement.template].compactMap { $0 }.joined(separator: " ")
            return
                "\(position) \(engagement.eventId) \(engagement.action.rawValue) by \(device) at \(ISO8601Timestamp.format(engagement.at, precision: .milliseconds))"
        case .status:
            if let progress = try? JSONDecoder().decode(TaskProgress.self, from: Data(value)) {
                let millis = Int(progress.finishedAt.timeIntervalSince(progress.startedAt) * 1000)
                return
                    "\(position) \(progress.eventId) task \(progress.taskIndex + 1)/\(progress.taskCount) delivered \(progress.delivered.total) skipped \(progress.skipped) in \(millis) ms"
            }
            guard let status = try? JSONDecoder().decode(StatusRecord.self, from: Data(value)) else {
                return "\(position) " + String(decoding: value, as: UTF8.self)
            }
            let byPlatform = status.targets.byPlatform.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            let duration = status.timings.durationMs.map { " \($0) ms" } ?? ""
            return
                "\(position) \(status.eventId) \(status.state.rawValue) tasks \(status.tasks.completed)/\(status.tasks.planned) targets \(status.targets.total) \(byPlatform) skipped \(status.skipped)\(duration)"
                + (status.reason.map { " reason: \($0)" } ?? "")
        }
    }
}
