import ArgumentParser
import HeraldCommandLine
import Foundation
import HeraldApp
import HeraldPipeline
import HeraldRedis
import HeraldRegistry

struct ReindexCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reindex",
        abstract:
            "Rebuild Redis from Kafka: the registration index from herald.registrations, event statuses and de-duplication claims from herald.status.",
        discussion: "Safe while workers run: changes applied twice are ignored by version, and statuses never move backwards."
    )

    @OptionGroup var options: SettingsOptions
    @Option(help: "Records per batch.") var batchSize = 5_000
    @Flag(help: "Rebuild only the registration index, not the statuses and claims.") var registrationsOnly = false

    func run() async throws {
        let settings = options.settings()
        try settings.applyAllocator(environment: ProcessInfo.processInfo.environment)
        let configuration = try settings.registryConfiguration()
        let pool = RedisConnectionPool(configuration: try settings.redisConfiguration(), size: max(2, try settings.int(.redisPoolSize)))
        defer { pool.shutdown() }
        let index = RegistrationIndex(pool: pool, layout: try settings.layout())
        try await index.checkMeta()
        let reindexer = Reindexer(
            configuration: configuration,
            consumerConfiguration: try settings.consumerConfiguration(groupId: nil, clientId: "herald-reindex"),
            index: index, concurrency: pool.size, batchSize: batchSize
        )
        let bar = ProgressBar(label: "reindex \(configuration.registrationsTopic)")
        let summary = try await reindexer.run { progress in
            bar.update(done: progress.recordsRead, total: progress.recordsTotal)
        }
        bar.finish()
        let rate = summary.seconds > 0 ? Int(Double(summary.recordsRead) / summary.seconds) : 0
        print(
            """
            records read  \(summary.recordsRead)
            applied       \(summary.applied)
            deleted       \(summary.deleted)
            installations \(summary.installations)
            ignored       \(summary.ignored)
            seconds       \(String(format: "%.2f", summary.seconds)) (\(rate) records/s)
            """)
        guard !registrationsOnly else { return }
        let pipeline = try settings.pipelineConfiguration()
        let statuses = try await StatusRebuilder(configuration: pipeline, pool: pool).run()
        print(
            """
            status records read \(statuses.recordsRead) (\(pipeline.topics.status))
            statuses            \(statuses.statuses)
            claims              \(statuses.claims)
            digest              \(statuses.digest), \(statuses.mismatched == 0 ? "Redis equals the log" : "\(statuses.mismatched) keys differ from the log")
            """)
        if statuses.mismatched > 0 {
            throw CommandFailure(
                "\(statuses.mismatched) statuses or claims in Redis differ from \(pipeline.topics.status) after the rebuild (see the warnings)"
            )
        }
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
