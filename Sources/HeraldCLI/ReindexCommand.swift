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
    @Option(
        help:
            "Rebuild only these Herald slots (for example 0-31,77) of the registration index, plus every template; for writes a failed-over Redis master lost. Statuses and claims are rebuilt whole (they only fill in what is missing)."
    )
    var slots: String?
    @Option(
        help:
            "Rebuild only the Herald slots whose hash slots the cluster master at host:port serves; after a failover, name the replica that took over."
    )
    var node: String?
    @Flag(
        help:
            "Rebuild only the scheduler's due index from herald.scheduled: the index is dropped, each running scheduler reads its partitions again, and this waits up to 60 s for them."
    )
    var scheduled = false

    func run() async throws {
        let settings = options.settings()
        if scheduled { return try await rebuildSchedules(settings) }
        try settings.applyAllocator(environment: ProcessInfo.processInfo.environment)
        let configuration = try settings.registryConfiguration()
        let pool = RedisConnectionPool(configuration: try settings.redisConfiguration(), size: max(2, try settings.redisPoolSize()))
        defer { pool.shutdown() }
        try await pool.verify()
        let index = RegistrationIndex(pool: pool, layout: try settings.layout())
        try await index.checkMeta()
        var reindexer = Reindexer(
            configuration: configuration,
            consumerConfiguration: try settings.consumerConfiguration(groupId: nil, clientId: "herald-reindex"),
            index: index, concurrency: pool.size, batchSize: batchSize
        )
        let scope = try await Self.scope(slots: slots, node: node, layout: index.layout, pool: pool)
        reindexer.slots = scope
        let bar = ProgressBar(label: "reindex \(configuration.registrationsTopic)")
        let progress: @Sendable (Reindexer.Progress) -> Void = { bar.update(done: $0.recordsRead, total: $0.recordsTotal) }
        guard !registrationsOnly else {
            let summary = try await reindexer.run(progress: progress)
            bar.finish()
            print(Self.describe(summary))
            return
        }
        if let scope {
            // A scoped rebuild repairs an index that is whole otherwise: no lease, same epoch.
            let summary = try await reindexer.run(progress: progress)
            bar.finish()
            print(Self.describe(summary))
            let statuses = try await StatusRebuilder(configuration: try settings.pipelineConfiguration(), pool: pool)
                .run(logger: Logger(label: "herald.reindex"))
            print("slots         \(scope.count) of \(index.layout.slotCount)")
            print("statuses      \(statuses.statuses), claims \(statuses.claims), \(statuses.mismatched) differ from the log")
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

    /// `--scheduled`: drops the due index and waits for the schedulers to read their
    /// partitions again. The scheduler owning a partition alone writes its keys, so the index
    /// is rebuilt by them, never beside them.
    private func rebuildSchedules(_ settings: HeraldSettings) async throws {
        let pool = RedisConnectionPool(configuration: try settings.redisConfiguration(), size: 1)
        defer { pool.shutdown() }
        try await pool.verify()
        let topics = try settings.topics
        let reader = ScheduleReader(pool: pool, layout: try settings.layout(), partitions: topics.scheduledPartitions)
        try await reader.dropIndex()
        print("dropped the due index of \(topics.scheduled) (\(topics.scheduledPartitions) partitions); waiting for the schedulers")
        var built: [Int32] = []
        for _ in 0..<600 {
            built = try await reader.builtPartitions()
            if built.count == Int(topics.scheduledPartitions) { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        let missing = (0..<topics.scheduledPartitions).filter { !built.contains($0) }
        print("rebuilt from the topic: partitions \(built.isEmpty ? "none" : built.map(String.init).joined(separator: ", "))")
        if !missing.isEmpty {
            throw CommandFailure(
                "no scheduler rebuilt partitions \(missing.map(String.init).joined(separator: ", ")) within 60 s; is a worker with the scheduler role running? One rebuilds them when it starts"
            )
        }
        print("pending schedules   \(try await reader.pending().count)")
    }

    /// The Herald slots of `--slots` or `--node`, nil when neither is given.
    static func scope(slots: String?, node: String?, layout: SlotLayout, pool: RedisConnectionPool) async throws -> Set<Int>? {
        if slots != nil, node != nil { throw CommandFailure("--slots and --node: give one of them") }
        if let slots { return try parseSlots(slots, slotCount: layout.slotCount) }
        guard let node else { return nil }
        guard let endpoint = RedisClusterEndpoint(node) else { throw CommandFailure("--node \(node): expected host:port") }
        guard pool.configuration.cluster != nil else { throw CommandFailure("--node needs a redis+cluster:// HERALD_REDIS_URL") }
        let reply = try await pool.withConnection { try await $0.send(.clusterSlots) }
        let map = try RedisClusterSlotMap(clusterSlots: reply, answeredBy: endpoint)
        let owned = Set(
            (0..<layout.slotCount).filter { map.master(forSlot: RedisClusterSlot.of(Array(layout.slotPrefix($0).utf8))) == endpoint })
        guard !owned.isEmpty else {
            throw CommandFailure(
                "--node \(node) serves none of Herald's \(layout.slotCount) slots; masters now: \(map.masters.map(\.description).joined(separator: ", "))"
            )
        }
        return owned
    }

    /// `0-31,77` → {0...31, 77}; every number within `0..<slotCount`.
    static func parseSlots(_ text: String, slotCount: Int) throws -> Set<Int> {
        var slots: Set<Int> = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let bounds = part.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false).map {
                Int($0.trimmingCharacters(in: .whitespaces))
            }
            guard let low = bounds.first ?? nil, let high = bounds.last ?? nil, low <= high, low >= 0, high < slotCount else {
                throw CommandFailure("--slots \(text): \"\(part)\" is not a slot or a range of slots within 0-\(slotCount - 1)")
            }
            slots.formUnion(low...high)
        }
        return slots
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
