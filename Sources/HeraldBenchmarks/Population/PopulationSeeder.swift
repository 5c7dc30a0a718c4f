import Foundation
import HeraldDomain
import HeraldRedis
import HeraldRegistry
import Logging
import Synchronization

/// Writes a `SeedPopulation` into Redis, in big pipelines from several threads.
///
/// - `.lua` goes through the indexer's own path: `RegistrationIndex.commands(for:)`, that is
///   the template `SET NX` and the `apply` Lua script per registration, exactly what the
///   indexer and a reindex send.
/// - `.bulk` writes the state `apply` leaves behind for a new, live registration in a fresh
///   prefix (doc, view, `all`, tag and handle sets, `ver`, template) with plain multi-member
///   commands grouped by slot. `SeedIdentityCheck` proves on a small population that both
///   paths produce byte-identical keys before a run relies on it.
public struct PopulationSeeder: Sendable {
    public let population: SeedPopulation
    public let layout: SlotLayout
    public let redis: RedisConfiguration
    public var path: BenchmarkOptions.SeedPath
    public var batchSize: Int
    public var threads: Int
    private let logger: Logger

    public init(
        population: SeedPopulation, layout: SlotLayout, redis: RedisConfiguration, path: BenchmarkOptions.SeedPath,
        batchSize: Int = 2_000, threads: Int = 2, logger: Logger = Logger(label: "herald.bench.seed")
    ) {
        self.population = population
        self.layout = layout
        self.redis = redis
        self.path = path
        self.batchSize = max(1, batchSize)
        self.threads = max(1, threads)
        self.logger = logger
    }

    public struct Summary: Sendable, Codable, Hashable {
        public var registrations: Int
        public var path: String
        public var seconds: Double
        public var perSecond: Double
    }

    /// Seeds every registration; `progress(done)` is called about once a second.
    public func seed(progress: @escaping @Sendable (Int) -> Void = { _ in }) async throws -> Summary {
        let pool = RedisConnectionPool(configuration: redis, size: 1, logger: logger)
        defer { pool.shutdown() }
        let index = RegistrationIndex(pool: pool, layout: layout, logger: logger)
        try await index.markBuilt()

        let next = SharedCounter()
        let done = SharedCounter()
        let total = population.count
        let batchSize = batchSize
        let started = ContinuousClock.now
        let reporter = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                if !Task.isCancelled { progress(done.current) }
            }
        }
        defer { reporter.cancel() }
        let configuration = redis
        let logger = logger
        // The bulk path loads slot by slot, so each batch fills whole view packs at once
        // instead of appending to every pack of every slot again (with 2,000 per batch and
        // 256 slots, each pack would be rewritten about once per registration it holds).
        let order = path == .bulk ? slotOrder() : nil
        try await BlockingThreads.run(count: threads, name: "herald.bench.seed") { [self] _ in
            let connection = RedisConnection(configuration: configuration, logger: logger)
            defer { connection.close() }
            let now = Date()
            while true {
                let start = next.add(batchSize)
                guard start < total else { break }
                let range = start..<min(start + batchSize, total)
                switch path {
                case .lua:
                    // Exactly what the API's write-through and the indexer build.
                    let entries = range.map { IndexedRegistration(population.registration(at: $0)) }
                    try applyWithScript(entries, index: index, connection: connection, now: now)
                case .bulk:
                    var prototypes = Prototypes()
                    let entries = range.map { position in
                        prototypes.entry(for: population.registration(at: order.map { Int($0[position]) } ?? position))
                    }
                    try applyInBulk(entries, connection: connection)
                }
                done.add(range.count)
            }
        }
        let seconds = (ContinuousClock.now - started).seconds
        progress(total)
        return Summary(registrations: total, path: path.rawValue, seconds: seconds, perSecond: Double(total) / max(seconds, 1e-9))
    }

    /// The population's indices ordered by slot (and by index within a slot).
    private func slotOrder() -> [Int32] {
        let slots = (0..<population.count).map { Int32(layout.slot(of: population.registrationId(at: $0))) }
        return (0..<Int32(population.count)).sorted { slots[Int($0)] != slots[Int($1)] ? slots[Int($0)] < slots[Int($1)] : $0 < $1 }
    }

    private func applyWithScript(_ entries: [IndexedRegistration], index: RegistrationIndex, connection: RedisConnection, now: Date) throws
    {
        let nowSeconds = Int64(now.timeIntervalSince1970)
        var commands: [RedisCommand] = []
        commands.reserveCapacity(entries.count * 2)
        for entry in entries { commands.append(contentsOf: index.commands(for: .registration(entry), nowSeconds: nowSeconds)) }
        for reply in try connection.pipelineBlocking(commands) {
            let value = try reply.get()
            if value.int == 0 {
                // The population's ids are unique and the prefix fresh; an ignored change means
                // the prefix was not empty, which would make every later count wrong.
                throw BenchmarkError("seeding: the apply script ignored a change; is the prefix \(layout.prefix) already in use?")
            }
        }
    }

    private func applyInBulk(_ entries: [IndexedRegistration], connection: RedisConnection) throws {
        try connection.pipelineBlocking(Self.bulkCommands(entries, layout: layout)).forEach { _ = try $0.get() }
    }

    /// Index forms without the JSON round trip of `IndexedRegistration(_:)`: the template
    /// JSON and content key are computed once per distinct (platform, template) and the
    /// per-registration fields set directly. `SeedIdentityCheck` compares the result with
    /// the Lua path fed by `IndexedRegistration(_:)`, so a drift would fail every bulk run.
    struct Prototypes {
        private var byTemplate: [String: IndexedRegistration] = [:]

        mutating func entry(for registration: Registration) -> IndexedRegistration {
            let key = "\(registration.platform.rawValue)|\(registration.template?.body ?? "")|\(registration.template?.name ?? "")"
            guard var entry = byTemplate[key] else {
                let entry = IndexedRegistration(registration)
                byTemplate[key] = entry
                return entry
            }
            entry.id = registration.registrationId
            entry.version = registration.version
            entry.document = registration.jsonBytes()
            entry.tags = registration.tags
            entry.handle = registration.handle
            entry.view.tags = registration.tags
            entry.view.handle = registration.handle
            return entry
        }
    }

    /// The bulk form of applying `entries` (new, live registrations) to an empty prefix.
    static func bulkCommands(_ entries: [IndexedRegistration], layout: SlotLayout) -> [RedisCommand] {
        var commands: [RedisCommand] = []
        var templates: Set<String> = []
        for entry in entries {
            if let template = entry.templateJSON, templates.insert(entry.view.templateKey).inserted {
                commands.append(.set(layout.templateKey(entry.view.templateKey), template, onlyIfAbsent: true))
            }
        }
        let bySlot = Dictionary(grouping: entries) { layout.slot(of: $0.id) }
        for (slot, members) in bySlot.sorted(by: { $0.key < $1.key }) {
            var strings = RedisCommand("MSET")
            // Positions, packs, tag sets and bitmaps: the same Lua functions as `apply`.
            var added = RedisCommand("EVAL", RegistryScripts.addNew.source, 1, layout.slotPrefix(slot))
            var all = RedisCommand("SADD", layout.allKey(slot: slot))
            var versions = RedisCommand("HSET", layout.versionKey(slot: slot))
            var handles: [String: [String]] = [:]
            for entry in members {
                strings.append(layout.documentKey(slot: slot, id: entry.id))
                strings.append(entry.document)
                added.append(entry.id)
                added.append(entry.view.encoded)
                added.append(String(entry.tags.count))
                for tag in entry.tags { added.append(tag) }
                all.append(entry.id)
                versions.append(entry.id)
                versions.append(entry.version)
                handles[entry.handle, default: []].append(entry.id)
            }
            commands.append(strings)
            commands.append(added)
            commands.append(all)
            commands.append(versions)
            for (handle, ids) in handles { commands.append(.sadd(layout.handleKey(slot: slot, handle: handle), ids)) }
        }
        return commands
    }
}
