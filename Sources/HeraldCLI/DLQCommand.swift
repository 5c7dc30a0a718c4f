import ArgumentParser
import HeraldCommandLine
import Foundation
import HeraldApp
import HeraldDomain
import HeraldKafka
import HeraldPipeline
import HeraldStreams

struct DLQCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dlq",
        abstract: "Inspect and replay events from the dead-letter topic.",
        subcommands: [List.self, Replay.self]
    )

    /// One dead letter as read back from `herald.events.dlq`.
    struct Entry {
        var partition: Int32
        var offset: Int64
        var key: [UInt8]?
        var envelope: [String: Any]

        var reason: String { envelope["reason"] as? String ?? "?" }
        var original: [UInt8]? {
            (envelope["originalBase64"] as? String).flatMap { Data(base64Encoded: $0) }.map(Array.init)
        }
        /// True when the envelope holds only the first bytes of an oversize original.
        var isTruncated: Bool { envelope["originalTruncated"] as? Bool ?? false }
        var sourceTopic: String? { (envelope["source"] as? [String: Any])?["topic"] as? String }
        var source: String {
            let source = envelope["source"] as? [String: Any] ?? [:]
            return "\(source["topic"] ?? "?")[\(source["partition"] ?? "?")]@\(source["offset"] ?? "?")"
        }
    }

    static func entries(settings: HeraldSettings) async throws -> [Entry] {
        var tail = RecordTail(topic: try settings.topics.eventsDeadLetters, bootstrapServers: settings[.kafkaBrokers])
        tail.extra = try settings.kafkaProperties()
        var entries: [Entry] = []
        for try await message in tail.records() {
            guard let value = message.value,
                let envelope = try? JSONSerialization.jsonObject(with: Data(value)) as? [String: Any]
            else { continue }
            entries.append(Entry(partition: message.partition, offset: message.offset, key: message.key, envelope: envelope))
        }
        return entries
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Reason, source offset and the first bytes of each dead letter.")
        @OptionGroup var options: SettingsOptions
        @Option(help: "Show at most this many (newest last).") var limit = 50

        func run() async throws {
            let entries = try await DLQCommand.entries(settings: options.settings())
            for entry in entries.suffix(limit) {
                let preview = entry.original.map { String(decoding: $0.prefix(120), as: UTF8.self) } ?? "(null)"
                print("[\(entry.partition):\(entry.offset)] \(entry.reason) from \(entry.source)")
                print("    \(entry.envelope["message"] as? String ?? "")".replacingOccurrences(of: "\n", with: "\n    "))
                print("    original: \(preview)")
            }
            var stderr = StandardError()
            print("\(entries.count) dead letters", to: &stderr)
        }
    }

    struct Replay: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Publish a dead letter (or a corrected version of it) back to herald.events."
        )
        @OptionGroup var options: SettingsOptions
        @Option(help: "Offset of the dead letter in its partition.") var offset: Int64
        @Option(help: "Partition of the dead letter.") var partition: Int32 = 0
        @Option(help: "Replace the original bytes with this corrected event (JSON or @file).") var file: String?
        @Flag(help: "Publish even if the event still does not validate (it will be dead-lettered again).") var force = false

        func run() async throws {
            let settings = options.settings()
            let topics = try settings.topics
            guard
                let entry = try await DLQCommand.entries(settings: settings)
                    .first(where: { $0.partition == partition && $0.offset == offset })
            else {
                throw CommandFailure("no dead letter at \(topics.eventsDeadLetters)[\(partition)]@\(offset)")
            }
            if let topic = entry.sourceTopic, topic != topics.events, file == nil {
                throw CommandFailure(
                    "the dead letter came from \(topic), not \(topics.events); give the event to publish with --file")
            }
            let bytes: [UInt8]
            if let file {
                bytes = Array(try InputArgument.resolve(file).utf8)
            } else if entry.isTruncated {
                throw CommandFailure(
                    "the original was \(entry.envelope["originalBytes"] ?? "?") bytes and only its first \(DeadLetter.maxInlineOriginalBytes) were kept; give a corrected event with --file"
                )
            } else if let original = entry.original {
                bytes = original
            } else {
                throw CommandFailure("the dead letter has no original value; give --file")
            }
            if !force {
                do {
                    _ = try NotificationEvent.decode(bytes)
                } catch {
                    throw CommandFailure("the event still does not validate (use --file with a fix, or --force):\n" + error.description)
                }
            }
            let producer = try KafkaProducer(configuration: settings.reliableProducerConfiguration(clientId: "herald-dlq"))
            let report = try await producer.send(KafkaOutgoingMessage(topic: topics.events, key: entry.key, value: bytes))
            await producer.shutdown()
            print("replayed \(entry.source) to \(topics.events)[\(report.partition)]@\(report.offset)")
        }
    }
}
