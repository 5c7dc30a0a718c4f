import ArgumentParser
import HeraldCommandLine
import Foundation
import HeraldApp
import HeraldPipeline
import HeraldRedis
import HeraldRegistry
import HeraldKafka
import Logging

struct ReindexCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reindex",
        abstract:
            "Rebuild Redis from Kafka: the registration index from herald.registrations; event statuses, de-duplication claims and the progress of events in flight from herald.status.",
        discussion:
            "Safe while workers run: changes applied twice are ignored by version, and statuses never move backwards. A worker with the indexer role does the same by itself when it finds Redis emptied."
    )

    @OptionGroup var options: SettingsOptions
    @Option(help: "Records per batch.") var batchSize = 5_000
    @Flag(
        help:
            "Rebuild only the registration index, not the statuses and claims. The index is not marked whole: on an emptied Redis the planner and fan-out keep waiting for a full rebuild."
    )
    var registrationsOnly = false

    func run() async throws {
        let settings = options.settings()
        try settings.applyAllocator(environment: ProcessInfo.processInfo.environment)
        let configuration = try settings.registryConfiguration()
        let pool = RedisConnectionPool(configuration: try settings.redisConfiguration(), size: max(2, try settings.int(.redisPoolSize)))
        defer { pool.shutdown() }
        try await pool.verify()
        let index = RegistrationIndex(pool: pool, layout: try settings.layout())
        try await index.checkMeta()
        let reindexer = Reindexer(
            configuration: configuration,
            consumerConfiguration: try settings.consumerConfiguration(groupId: nil, clientId: "herald-reindex"),
            index: index, concurrency: pool.size, batchSize: batchSize
        )
        let bar = ProgressBar(label: "reindex \(configuration.registrationsTopic)")
        let progress: @Sendable (Reindexer.Progress) -> Void = { bar.update(done: $0.recordsRead, total: $0.recordsTotal) }
        guard !registrationsOnly else {
            let summary = try await reindexer.run(progress: progress)
            bar.finish()
            print(Self.describe(summary))
            return
        }
        let pipeline = try settings.pipelineConfiguration()
        let producer = try KafkaProducer(configuration: settings.reliableProducerConfiguration(clientId: "herald-reindex"))
        defer { Task { await producer.shutdown() } }
        let rebuild = IndexRebuild(reindexer: reindexer, statuses: StatusRebuilder(configuration: pipeline, pool: pool, producer: producer))
        let token = "reindex-\(UUID().uuidString.prefix(8).lowercased())"
        var summary: IndexRebuild.Summary?
        var waited = false
        while summary == nil {
            summary = try await rebuild.run(token: token, logger: Logger(label: "herald.reindex"), progress: progress)
            if summary == nil {
                if !waited { FileHandle.standardError.write(Data("another process is rebuilding the index; waiting for its lease\n".utf8)) }
                waited = true
                try await Task.sleep(for: .seconds(1))
            }
        }
        bar.finish()
        await producer.shutdown()
        let statuses = summary!.statuses
        print(Self.describe(summary!.registrations))
        print(
            """
            status records read \(statuses.recordsRead) (\(pipeline.topics.status))
            statuses            \(statuses.statuses)
            claims              \(statuses.claims)
            events in flight    \(statuses.inFlight) (progress rebuilt), \(statuses.completed) completed by the rebuild
            digest              \(statuses.digest), \(statuses.mismatched == 0 ? "Redis equals the log" : "\(statuses.mismatched) keys differ from the log")
            index epoch         \(summary!.epoch)
            """)
        if statuses.mismatched > 0 {
            throw CommandFailure(
                "\(statuses.mismatched) statuses or claims in Redis differ from \(pipeline.topics.status) after the rebuild (see the warnings)"
            )
        }
    }

    static func describe(_ summary: Reindexer.Summary) -> String {
        let rate = summary.seconds > 0 ? Int(Double(summary.recordsRead) / summary.seconds) : 0
        return """
            records read  \(summary.recordsRead)
            applied       \(summary.applied)
            deleted       \(summary.deleted)
            installations \(summary.installations)
            ignored       \(summary.ignored)
            seconds       \(String(format: "%.2f", summary.seconds)) (\(rate) records/s)
            """
    }
}

/// A one-line progress bar on stderr, redrawn at most ten times a second.
final class ProgressBar: @unchecked Sendable {
    private let label: String
    private let lock = NSLock()
    private var lastDraw = Date.distantPast

    init(label: String) { self.label = label }

    func update(done: Int, total: Int) {
        lock.lock()
        defer { lock.unlock() }
        guard Date().timeIntervalSince(lastDraw) > 0.1 else { return }
        lastDraw = Date()
        let fraction = total > 0 ? min(1, Double(done) / Double(total)) : 0
        let width = 30
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        FileHandle.standardError.write(Data("\r\(label) [\(bar)] \(done)/\(total)".utf8))
    }

    func finish() {
        FileHandle.standardError.write(Data("\n".utf8))
    }
}
