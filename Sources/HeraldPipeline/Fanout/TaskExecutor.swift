import Foundation
import HeraldDomain
import HeraldKafka
import HeraldRedis
import HeraldRegistry
import Logging

/// The fan-out hot path: delivers one task's event to every registration of the task's slots
/// that the audience selects.
///
/// Per slot it resolves the tag expression inside Redis (the domain's `TagSetPlan` as
/// SUNIONSTORE / SINTERSTORE / SDIFFSTORE into scratch keys; a single tag or a broadcast
/// needs none), gathers the members with SSCAN pages (up to `snapshotReadLimit` at a time)
/// and fetches the view packs holding them with HMGET, each pack once, so memory stays bounded
/// whatever the audience. A broadcast reads the slot's packs instead (HGETALL, or HMGET runs of packs for a
/// big slot): ids and views together, a few hundred replies per slot instead of two per device.
/// Each distinct (template, platform) is rendered once per task and every record is written
/// into one reused buffer and queued without waiting for acknowledgements.
///
/// Runs on the lane's own thread with blocking Redis calls; one executor per lane.
final class TaskExecutor: @unchecked Sendable {
    private let configuration: PipelineConfiguration
    private let redis: RedisConnection
    /// Streams a broadcast's packs (`deliverEverything`). A connection of its own: while a
    /// read-ahead reply is outstanding on it, writing the records of the current reply may
    /// need Redis for something else (a template not cached yet), which goes to `redis`.
    private let packReader: RedisConnection
    private let templates: TemplateCache
    private let metrics: PipelineMetrics
    private let gate: ExpressGate?
    private let logger: Logger
    private var buffer: [UInt8] = []
    /// The current page's member ids (reused from page to page).
    private var members = FlatByteStrings()
    /// The pack of each member (`deliverMembers`).
    private var memberPacks: [Int] = []
    /// Where each pack's members start in `byPack` (one more entry than packs).
    private var packStarts = [Int](repeating: 0, count: SlotLayout.packsPerSlot + 1)
    /// Member indices ordered by pack.
    private var byPack: [Int] = []
    /// The deliveries partitions this lane writes to (set before the lane starts); nil lets
    /// the producer partition by key over the whole topic.
    var deliveryPartitions: Range<Int32>?
    /// The partition every delivery of the current transaction goes to (`choosePartition`).
    private(set) var transactionPartition: Int32?
    private var rotation = Int.random(in: 0..<4_096)
    /// The deliveries topic of the producer of the task being run (`run` sets it).
    private var deliveriesTopic: KafkaProducerTopic?

    /// - Parameter gate: set for bulk lanes, which step aside for express work.
    init(
        configuration: PipelineConfiguration, redis: RedisConnection, packReader: RedisConnection, templates: TemplateCache,
        gate: ExpressGate?, logger: Logger, metrics: PipelineMetrics = .shared
    ) {
        self.configuration = configuration
        self.redis = redis
        self.packReader = packReader
        self.templates = templates
        self.gate = gate
        self.logger = logger
        self.metrics = metrics
        buffer.reserveCapacity(4096)
    }

    /// Delivers `task`, queueing records on `producer` (inside the caller's transaction).
    func run(_ task: FanoutTask, producer: KafkaProducer) throws -> TaskProgress {
        let startedAt = Date()
        deliveriesTopic = try producer.topic(configuration.topics.deliveries)
        defer { deliveriesTopic = nil }
        var run = TaskRun(task: task, configuration: configuration)
        let nonce = UInt32.random(in: 0...UInt32.max)
        // A unique scratch name per attempt: a zombie attempt of the same task (a member that
        // lost its partitions) must never delete sets this attempt is still scanning.
        let scratch = "\(task.eventId):\(task.taskIndex):\(String(nonce, radix: 36))"
        // Read from a whole index only, and the same one throughout (`IndexEpoch`): otherwise
        // the transaction is aborted and the task redone once the index is rebuilt.
        let layout = configuration.layout
        let epoch = try IndexEpoch.require(redis.sendBlocking(IndexEpoch.read(layout)), layout: layout)
        if Self.selectsEverything(run.plan) {
            try deliverEverything(slots: task.slots, run: &run, producer: producer)
        } else {
            for slot in task.slots {
                try deliver(slot: slot, scratch: scratch, run: &run, producer: producer)
            }
        }
        try IndexEpoch.verify(redis.sendBlocking(IndexEpoch.read(layout)), unchanged: epoch, layout: layout)
        let finishedAt = Date()
        var delivered = DeliveryCounts()
        for entry in run.renditions {
            guard case .deliver(let rendition) = entry.outcome, entry.delivered > 0 else { continue }
            delivered.total += entry.delivered
            delivered.byPlatform[rendition.platform.rawValue, default: 0] += entry.delivered
            delivered.byTemplate[rendition.templateName, default: 0] += entry.delivered
            metrics.deliveries(rendition.platform.rawValue).increment(by: entry.delivered)
        }
        var skipped = 0
        for (reason, count) in run.skipped {
            skipped += count
            metrics.skipped(reason).increment(by: count)
        }
        var progress = TaskProgress(
            eventId: task.eventId, taskIndex: task.taskIndex, taskCount: task.taskCount, delivered: delivered,
            skipped: skipped, failed: run.failed, startedAt: startedAt, finishedAt: finishedAt,
            firstDeliveryAt: run.firstDeliveryAt
        )
        progress.skippedReasons = run.skipped
        return progress
    }

    // MARK: One slot

    private func deliver(slot: Int, scratch: String, run: inout TaskRun, producer: KafkaProducer) throws {
        let (source, temporaries) = try resolve(slot: slot, scratch: scratch, plan: run.plan)
        defer {
            if !temporaries.isEmpty { _ = try? redis.sendBlocking(.del(temporaries)) }
        }
        let layout = configuration.layout
        let packsKey = layout.packsKey(slot: slot)
        let limit = max(1, configuration.snapshotReadLimit)
        var packsPerRead: Int?
        var cursor: UInt64 = 0
        repeat {
            // Up to `limit` members (whole SSCAN pages; ids copied once, flat), then the packs
            // holding them, each pack once, so a slot's packs are read about once per `limit`
            // members however the members spread over them.
            members.removeAll(keepingCapacity: true)
            repeat {
                gate?.yieldIfBusy()
                cursor = try scan(source, cursor: cursor, count: configuration.scanCount, into: &members)
            } while cursor != 0 && members.count < limit
            guard !members.isEmpty else { continue }
            try deliverMembers(packsKey: packsKey, run: &run, producer: producer) {
                if let packsPerRead { return packsPerRead }
                let computed = try Self.packsPerRead(registrations: slotSize(slot), limit: limit)
                packsPerRead = computed
                return computed
            }
        } while cursor != 0
    }

    /// Registrations in `slot` (`SCARD all`; `all` and the packs always hold the same ids).
    private func slotSize(_ slot: Int) throws -> Int {
        try slotSizes(slot..<(slot + 1))[0]
    }

    /// At most this many packs are read at once without asking the slot's size (1/16 of a slot).
    static let smallRead = 16

    /// Packs per `HMGET` so one reply holds about `limit` registrations.
    static func packsPerRead(registrations: Int, limit: Int) -> Int {
        max(1, SlotLayout.packsPerSlot * limit / max(registrations, 1))
    }

    /// A broadcast (or `!` of nothing): every registration of the task's slots, from the
    /// slots' view packs, which hold ids and views together.
    ///
    /// One round trip asks every slot's size (`SCARD all`; `all` and the packs always hold the
    /// same ids). A slot of at most `snapshotReadLimit` registrations is then read with one
    /// `HGETALL`, a consistent snapshot; a bigger one in runs of packs with `HMGET`, so memory
    /// stays bounded whatever the slot size (a registration never changes pack, so each one is
    /// read once even while the slot changes). The reads are streamed
    /// (`RedisConnection.streamRepliesBlocking`): Redis prepares the next reply while this
    /// lane writes the records of the current one, so the lane does not stand still waiting
    /// for Redis at every slot while the producer's next batch waits to be filled.
    private func deliverEverything(slots: Range<Int>, run: inout TaskRun, producer: KafkaProducer) throws {
        let layout = configuration.layout
        let sizes = try slotSizes(slots)
        var reads: [(command: RedisCommand, key: String, isWholeSlot: Bool)] = []
        for (slot, registrations) in zip(slots, sizes) where registrations > 0 {
            let packsKey = layout.packsKey(slot: slot)
            if registrations <= configuration.snapshotReadLimit {
                reads.append((.hgetall(packsKey), packsKey, true))
                continue
            }
            let packsPerRead = Self.packsPerRead(registrations: registrations, limit: configuration.snapshotReadLimit)
            for start in stride(from: 0, to: SlotLayout.packsPerSlot, by: packsPerRead) {
                var command = RedisCommand("HMGET", isReadOnly: true)
                command.append(packsKey)
                for index in start..<min(start + packsPerRead, SlotLayout.packsPerSlot) {
                    command.append(SlotLayout.packFields[index])
                }
                reads.append((command, packsKey, false))
            }
        }
        try packReader.streamRepliesBlocking(reads.map(\.command)) { index, reply in
            gate?.yieldIfBusy()
            let read = reads[index]
            if let error = packReader.error(in: reply, of: read.command) { throw error }
            if read.isWholeSlot {
                guard reply.isArray, reply.count % 2 == 0 else {
                    throw RedisError(code: .unexpectedReply, message: "HGETALL \(read.key) did not reply with field-value pairs")
                }
                try write(packs: reply, first: 1, step: 2, key: read.key, run: &run, producer: producer)
            } else {
                guard reply.isArray else {
                    throw RedisError(code: .unexpectedReply, message: "HMGET \(read.key) did not reply with an array")
                }
                try write(packs: reply, first: 0, step: 1, key: read.key, run: &run, producer: producer)
            }
        }
    }

    /// Registrations in each of `slots` (`SCARD all`), in one round trip.
    private func slotSizes(_ slots: Range<Int>) throws -> [Int] {
        let commands = slots.map { RedisCommand.scard(configuration.layout.allKey(slot: $0)) }
        return try redis.withPipelineRepliesBlocking(commands) { replies in
            try zip(commands, replies).map { command, reply in
                if let error = redis.error(in: reply, of: command) { throw error }
                return reply.integer ?? Int.max
            }
        }
    }

    /// Delivers to `members`: groups them by pack, reads the packs holding them with `HMGET`
    /// (each pack once) and finds each member in its pack. Up to `smallRead` packs come in one
    /// read (a one-user event needs one or two, and no slot size); more come in runs of
    /// `packsPerRead()` packs. A member missing from its pack was removed after the `SSCAN`
    /// (`registration_gone`).
    private func deliverMembers(
        packsKey: String, run: inout TaskRun, producer: KafkaProducer, packsPerRead: () throws -> Int
    ) throws {
        // Counting sort of the members by pack: members of pack p are
        // byPack[packStarts[p]..<packStarts[p + 1]].
        memberPacks.removeAll(keepingCapacity: true)
        for position in packStarts.indices { packStarts[position] = 0 }
        for index in members.indices {
            let pack = members.withBytes(at: index) { SlotLayout.pack(of: $0) }
            memberPacks.append(pack)
            packStarts[pack + 1] += 1
        }
        for pack in 0..<SlotLayout.packsPerSlot { packStarts[pack + 1] += packStarts[pack] }
        byPack.removeAll(keepingCapacity: true)
        byPack.append(contentsOf: repeatElement(0, count: members.count))
        var next = Array(packStarts.dropLast())
        for (index, pack) in memberPacks.enumerated() {
            byPack[next[pack]] = index
            next[pack] += 1
        }

        var distinct = 0
        for pack in 0..<SlotLayout.packsPerSlot where packStarts[pack + 1] > packStarts[pack] { distinct += 1 }
        let perRead = distinct <= Self.smallRead ? SlotLayout.packsPerSlot : try packsPerRead()
        for first in stride(from: 0, to: SlotLayout.packsPerSlot, by: perRead) {
            let needed = (first..<min(first + perRead, SlotLayout.packsPerSlot)).filter { packStarts[$0 + 1] > packStarts[$0] }
            guard !needed.isEmpty else { continue }
            gate?.yieldIfBusy()
            var command = RedisCommand("HMGET", isReadOnly: true)
            command.append(packsKey)
            for pack in needed { command.append(SlotLayout.packFields[pack]) }
            try redis.withPipelineRepliesBlocking([command]) { replies in
                let reply = replies[0]
                if let error = redis.error(in: reply, of: command) { throw error }
                guard reply.isArray, reply.count == needed.count else {
                    throw RedisError(code: .unexpectedReply, message: "HMGET \(packsKey) did not reply with one value per pack")
                }
                let clock = PageClock()
                var delivered = 0
                for (position, pack) in needed.enumerated() {
                    let packBytes = reply[position].bytes
                    for entry in packStarts[pack]..<packStarts[pack + 1] {
                        try members.withBytes(at: byPack[entry]) { id in
                            let view = packBytes.flatMap { ViewPack.view(of: id, in: $0) }
                            if try write(id: id, view: view, clock: clock, run: &run, producer: producer) { delivered += 1 }
                        }
                    }
                }
                finishPage(delivered: delivered, clock: clock, run: &run)
            }
        }
    }

    /// True when the audience is every registration: no expression, or one that plans to the
    /// slot's `all` set without any set operation.
    static func selectsEverything(_ plan: TagSetPlan?) -> Bool {
        guard let plan else { return true }
        return plan.steps.isEmpty && plan.result == .all
    }

    /// `SSCAN` from `cursor` as its own round trip; fills `members`, returns the next cursor.
    private func scan(_ source: String, cursor: UInt64, count: Int, into members: inout FlatByteStrings) throws -> UInt64 {
        let command = RedisCommand.sscan(source, cursor: cursor, count: count)
        return try redis.withPipelineRepliesBlocking([command]) { replies in
            if let error = redis.error(in: replies[0], of: command) { throw error }
            return try Self.readPage(replies[0], command: "SSCAN", source: source, into: &members)
        }
    }

    /// An `SSCAN` reply: `[cursor, [member, ...]]`.
    private static func readPage(
        _ reply: RedisReplyReference, command: String, source: String, into members: inout FlatByteStrings
    ) throws -> UInt64 {
        guard reply.count == 2, let cursorBytes = reply[0].bytes, let cursor = UInt64(decimal: cursorBytes), reply[1].isArray
        else {
            throw RedisError(code: .unexpectedReply, message: "\(command) \(source) did not reply with a page")
        }
        let page = reply[1]
        for index in 0..<page.count {
            if let bytes = page[index].bytes { members.append(bytes) }
        }
        return cursor
    }

    /// The set holding the audience within `slot`, computing it into scratch sets if needed.
    private func resolve(slot: Int, scratch: String, plan: TagSetPlan?) throws -> (String, [String]) {
        let layout = configuration.layout
        guard let plan else { return (layout.allKey(slot: slot), []) }
        func key(_ operand: TagSetPlan.Operand) -> String {
            switch operand {
            case .tag(let tag): layout.tagKey(slot: slot, tag: tag)
            case .all: layout.allKey(slot: slot)
            case .temporary(let index): layout.temporaryKey(slot: slot, task: scratch, step: index)
            }
        }
        guard !plan.steps.isEmpty else { return (key(plan.result), []) }
        var commands: [RedisCommand] = []
        var temporaries: [String] = []
        for step in plan.steps {
            let destination = key(.temporary(step.destination))
            let sources = step.sources.map(key)
            switch step {
            case .union: commands.append(.sunionstore(destination, sources))
            case .intersection: commands.append(.sinterstore(destination, sources))
            case .difference: commands.append(.sdiffstore(destination, sources))
            }
            commands.append(.expire(destination, seconds: configuration.temporaryTTLSeconds))
            temporaries.append(destination)
        }
        for reply in try redis.pipelineBlocking(commands) { _ = try reply.get() }
        return (key(plan.result), temporaries)
    }

    // MARK: One page

    /// The clock of one page: every record of a page carries the same `renderedAt`.
    private struct PageClock {
        let now: Date
        let nowSeconds: Int64
        /// The records' Kafka timestamp (milliseconds since 1970).
        let nowMilliseconds: Int64
        var renderedAt: [UInt8] = []

        init() {
            now = Date()
            nowSeconds = Int64(now.timeIntervalSince1970)
            nowMilliseconds = Int64((now.timeIntervalSince1970 * 1_000).rounded(.down))
            ISO8601Timestamp.append(now, precision: .milliseconds, to: &renderedAt)
        }
    }

    /// Writes the records of every pack in `reply` (elements `first`, `first + step`, ...; nil
    /// elements are packs with no registration), read in place.
    private func write(
        packs reply: RedisReplyReference, first: Int, step: Int, key: String, run: inout TaskRun, producer: KafkaProducer
    ) throws {
        let clock = PageClock()
        var delivered = 0
        var index = first
        let count = reply.count
        while index < count {
            if let pack = reply[index].bytes {
                let whole = try ViewPack.forEachEntry(in: pack) { id, view in
                    if try write(id: id, view: view, clock: clock, run: &run, producer: producer) { delivered += 1 }
                }
                if !whole {
                    run.skip("unreadable_view")
                    logger.error(
                        "malformed view pack: its registrations after the last whole entry were skipped",
                        metadata: ["key": "\(key)"]
                    )
                }
            }
            index += step
        }
        finishPage(delivered: delivered, clock: clock, run: &run)
    }

    /// One registration: skips it with a reason, or renders (once per template and platform
    /// per task) and queues its record. Returns true when a record was queued.
    private func write(
        id: UnsafeRawBufferPointer, view: UnsafeRawBufferPointer?, clock: PageClock, run: inout TaskRun,
        producer: KafkaProducer
    ) throws -> Bool {
        guard let view else {
            // Removed between SSCAN and HMGET (or its pack is malformed).
            run.skip("registration_gone")
            return false
        }
        guard let fields = ViewFields(view) else {
            run.skip("unreadable_view")
            return false
        }
        if let expiry = fields.expiresAt(in: view), expiry <= clock.nowSeconds {
            run.skip("registration_expired")
            return false
        }
        let slot = try run.rendition(for: view, fields: fields, templates: templates, redis: redis, now: clock.now)
        guard case .deliver(let rendition) = run.renditions[slot].outcome else {
            switch run.renditions[slot].outcome {
            case .skip(let reason): run.skip(reason)
            case .fail: run.failed += 1
            case .deliver: break
            }
            return false
        }
        buffer.removeAll(keepingCapacity: true)
        let idBytes = id.assumingMemoryBound(to: UInt8.self)
        let handle = UnsafeRawBufferPointer(rebasing: view[fields.handle]).assumingMemoryBound(to: UInt8.self)
        rendition.write(registrationId: idBytes, handle: handle, renderedAt: clock.renderedAt, into: &buffer)
        guard let topic = deliveriesTopic else { preconditionFailure("write outside run") }
        try buffer.withUnsafeBytes { value in
            try producer.enqueue(
                to: topic, partition: transactionPartition, key: id, value: value, timestampMs: clock.nowMilliseconds
            )
        }
        run.renditions[slot].delivered += 1
        return true
    }

    private func finishPage(delivered: Int, clock: PageClock, run: inout TaskRun) {
        guard delivered > 0 else { return }
        if run.firstDeliveryAt == nil { run.firstDeliveryAt = clock.now }
        if let publishedAt = run.task.event.publishedAt {
            metrics.publishToDelivery.recordNanoseconds(Int64(clock.now.timeIntervalSince(publishedAt) * 1e9))
        }
    }

    /// Picks the partition every delivery of the next transaction goes to; call once per
    /// transaction, before its first delivery.
    ///
    /// All deliveries of one transaction go to one partition. A `read_committed` reader cannot
    /// read a partition past a transaction that is open on it, so a lane that spread every
    /// transaction over all its partitions would keep each of them blocked almost all the time.
    ///
    /// With `source`, the partition of `herald.tasks` the task came from, the lane writes the
    /// deliveries partition that belongs to that task partition (`range.lowerBound + source %
    /// range.count`). The consumer group gives each task partition to one lane, so as long as
    /// the range has at least as many partitions as `herald.tasks`, no two lanes (in any
    /// worker) ever write one deliveries partition at the same time: no lane's open
    /// transaction holds back what another committed, on Apache Kafka or on Tansu, where
    /// overlapping writers keep each other hidden (`TransactionGate`). Without `source` (the
    /// express path) it moves to the next partition of the range.
    func choosePartition(source: Int32? = nil) {
        guard let range = deliveryPartitions, !range.isEmpty else {
            transactionPartition = nil
            return
        }
        if let source, source >= 0 {
            transactionPartition = range.lowerBound + source % Int32(range.count)
            return
        }
        rotation &+= 1
        transactionPartition = range.lowerBound + Int32(rotation % range.count)
    }
}

/// Field ranges inside a fan-out view line
/// (`1|<platform>|<expiresAt>|<template name>|<template key>|<handle>`), found without
/// allocating: the hot path reads one view per device.
struct ViewFields {
    var platform: Range<Int>
    var expiry: Range<Int>
    var templateName: Range<Int>
    var templateKey: Range<Int>
    var handle: Range<Int>

    init?(_ view: [UInt8]) {
        guard let fields = view.withUnsafeBytes({ ViewFields($0) }) else { return nil }
        self = fields
    }

    init?(_ view: UnsafeRawBufferPointer) {
        // "1|" then four more separators, found with memchr: the hot path parses one view
        // per device, and the handle (the longest field, which may itself contain '|') is last.
        guard view.count >= 2, view[0] == UInt8(ascii: "1"), view[1] == UInt8(ascii: "|"), let base = view.baseAddress else {
            return nil
        }
        let count = view.count
        func separator(after start: Int) -> Int? {
            guard start < count, let found = memchr(base + start, Int32(UInt8(ascii: "|")), count - start) else { return nil }
            return base.distance(to: UnsafeRawPointer(found))
        }
        guard let second = separator(after: 2), let third = separator(after: second + 1),
            let fourth = separator(after: third + 1), let fifth = separator(after: fourth + 1)
        else { return nil }
        platform = 2..<second
        expiry = (second + 1)..<third
        templateName = (third + 1)..<fourth
        templateKey = (fourth + 1)..<fifth
        handle = (fifth + 1)..<count
    }

    func expiresAt(in view: [UInt8]) -> Int64? {
        view.withUnsafeBytes { expiresAt(in: $0) }
    }

    func expiresAt(in view: UnsafeRawBufferPointer) -> Int64? {
        guard !expiry.isEmpty else { return nil }
        var value: Int64 = 0
        for index in expiry {
            let digit = view[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            value = value &* 10 &+ Int64(digit)
        }
        return value
    }
}
