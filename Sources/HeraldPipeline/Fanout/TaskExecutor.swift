import Foundation
import HeraldDomain
import HeraldKafka
import HeraldRedis
import HeraldRegistry
import Logging

/// The fan-out hot path: delivers one task's event to every registration of the task's slots
/// that the audience selects.
///
/// A broadcast reads each slot's view packs (HGETALL, or HMGET runs of packs for a big slot):
/// ids and views together, one reply per 16 registrations instead of two per device. An
/// expression is given a plan per slot (`+Plans`, from the sizes of its tags' sets there):
/// where its tags have bitmaps it is evaluated on them and only the packs holding the
/// audience are read (`bits`); otherwise a wide audience is read like a broadcast with each
/// view tested against the compiled expression (`scan`), and a narrow one is resolved inside
/// Redis (`sets`: the domain's `TagSetPlan` as SUNIONSTORE / SINTERSTORE / SDIFFSTORE into
/// scratch keys; a single tag needs none), its members gathered with SSCAN pages (up to
/// `snapshotReadLimit` at a time) and the packs of their positions fetched with HMGET, each
/// pack once, so memory stays bounded whatever the audience.
/// Each distinct (template, platform) is rendered once per task and every record is written
/// into one reused buffer and queued without waiting for acknowledgements.
///
/// Runs on the lane's own thread with blocking Redis calls; one executor per lane. The parts:
/// this file (a task from start to progress, the deliveries partition), `+Plans` (each slot's
/// plan), `+Audience` (the `sets` plan, slot by slot), `+Broadcast` (the `broadcast` and `scan`
/// plans, streamed from the packs), `+Bitmaps` (the `bits` plan),
/// `+Records` (a page of views into delivery records).
///
/// Who does what when a task is delivered: a `FanoutLane` consumes a task topic in Kafka
/// transactions; its `TaskDelivery` runs a batch of tasks inside the open transaction and adds
/// their progress and status records; the `TaskExecutor` delivers one task against Redis; a
/// `TaskRun` is the state of that one task while it runs (its renditions and counts).
final class TaskExecutor: @unchecked Sendable {
    let configuration: PipelineConfiguration
    let redis: RedisConnection
    /// Streams the packs of a broadcast or a plan (`stream`), and for `bits` the next slots'
    /// bitmaps behind them. A connection of its own: while a read-ahead reply is outstanding
    /// on it, writing the records of the current reply may need Redis for something else (a
    /// template not cached yet), which goes to `redis`.
    let packReader: RedisConnection
    let templates: TemplateCache
    let metrics: PipelineMetrics
    let gate: ExpressGate?
    let logger: Logger
    var buffer: [UInt8] = []
    /// The current page's member ids (reused from page to page).
    var members = FlatByteStrings()
    /// The position of each member (`deliverMembers`; -1: no longer in the slot).
    var memberPositions: [Int] = []
    /// Member indices ordered by pack.
    var byPack: [Int] = []
    /// The deliveries partitions this lane writes to (set before the lane starts); nil lets
    /// the producer partition by key over the whole topic.
    var deliveryPartitions: Range<Int32>?
    /// The partition every delivery of the current transaction goes to (`choosePartition`).
    private(set) var transactionPartition: Int32?
    var rotation = Int.random(in: 0..<4_096)
    /// The deliveries topic of the producer of the task being run (`run` sets it).
    var deliveriesTopic: KafkaProducerTopic?
    /// The keys of the hub of the task being run (`run` sets it).
    var layout: SlotLayout
    /// The renditions of the event this lane ran last, for its next tasks.
    var eventRenditions = EventRenditions()
    /// What the task being run may still wait for breaking work (`ExpressGate.breakingBudget`).
    var breakingPauseLeft = ExpressGate.breakingBudget

    /// - Parameter gate: set for bulk lanes, which step aside for express work.
    init(
        configuration: PipelineConfiguration, redis: RedisConnection, packReader: RedisConnection, templates: TemplateCache,
        gate: ExpressGate?, logger: Logger, metrics: PipelineMetrics
    ) {
        self.configuration = configuration
        self.redis = redis
        self.packReader = packReader
        self.templates = templates
        self.gate = gate
        self.logger = logger
        self.metrics = metrics
        self.layout = configuration.layout
        buffer.reserveCapacity(4096)
    }

    /// Delivers `task`, queueing records on `producer` (inside the caller's transaction).
    ///
    /// - Parameter audience: a correction's task's audience (`CorrectionAudience`), read
    ///   before the task runs; required for a task with `correction`.
    func run(_ task: FanoutTask, producer: KafkaProducer, audience: CorrectionAudience? = nil) throws -> TaskProgress {
        let startedAt = Date()
        deliveriesTopic = try producer.topic(configuration.topics.deliveries)
        defer { deliveriesTopic = nil }
        var run = TaskRun(task: task, configuration: configuration)
        breakingPauseLeft = ExpressGate.breakingBudget
        let nonce = UInt32.random(in: 0...UInt32.max)
        // A unique scratch name per attempt: a zombie attempt of the same task (a member that
        // lost its partitions) must never delete sets this attempt is still scanning.
        let scratch = "\(task.eventId):\(task.taskIndex):\(String(nonce, radix: 36))"
        // Read from a whole index only, and the same one throughout (`IndexEpoch`): otherwise
        // the transaction is aborted and the task redone once the index is rebuilt.
        layout = configuration.layout.hub(task.event.hub)
        let epoch = try IndexEpoch.require(redis.sendBlocking(IndexEpoch.read(layout)), layout: layout)
        run.alerts = try alertHistory(of: task, epoch: epoch, now: startedAt)
        run.quiet = try quietHoursCheck(of: task, now: startedAt)
        try checkStop(&run, now: ContinuousClock.now, force: true)
        if run.stopped {
            // Stopped before this task began: it delivers nothing.
        } else if task.correction != nil {
            guard var audience else {
                throw RedisError(code: .unexpectedReply, message: "a correction's task ran without its audience")
            }
            try deliver(correction: &audience, run: &run, producer: producer)
        } else if let targets = task.event.direct {
            try deliver(direct: targets, run: &run, producer: producer)
        } else if let recipients = task.event.testRecipients {
            try deliver(testRecipients: recipients, slots: task.slots, run: &run, producer: producer)
        } else if Self.selectsEverything(run.plan) {
            let slots = Array(zip(task.slots, try slotSizes(task.slots)))
            try deliverEverything(slots: slots, filter: nil, run: &run, producer: producer)
            run.plans[FanoutPlanKind.broadcast.rawValue] = slots.count { $0.1 > 0 }
        } else if let expression = task.event.audience.expression, let setPlan = run.plan {
            try deliver(expression, setPlan: setPlan, slots: task.slots, scratch: scratch, run: &run, producer: producer)
        }
        if let alerts = run.alerts, !task.rehearsal { try save(alerts, of: task, epoch: epoch, now: Date()) }
        if let quiet = run.quiet, !task.rehearsal { try scheduleReleases(quiet, of: task, producer: producer) }
        try IndexEpoch.verify(redis.sendBlocking(IndexEpoch.read(layout)), unchanged: epoch, layout: layout)
        let finishedAt = Date()
        var delivered = DeliveryCounts()
        for entry in run.renditions {
            guard case .deliver(let rendition) = entry.outcome, entry.delivered > 0 else { continue }
            delivered.total += entry.delivered
            delivered.byPlatform[rendition.platform.rawValue, default: 0] += entry.delivered
            delivered.byTemplate[rendition.templateName, default: 0] += entry.delivered
            if !task.rehearsal { metrics.deliveries(rendition.platform.rawValue).increment(by: entry.delivered) }
        }
        if task.rehearsal { try writePreviews(run) }
        var skipped = 0
        for (reason, count) in run.skipped {
            skipped += count
            if !task.rehearsal { metrics.skipped(reason).increment(by: count) }
        }
        var progress = TaskProgress(
            eventId: task.eventId, taskIndex: task.taskIndex, taskCount: task.taskCount, delivered: delivered,
            skipped: skipped, failed: run.failed, startedAt: startedAt, finishedAt: finishedAt,
            firstDeliveryAt: run.firstDeliveryAt
        )
        progress.skippedReasons = run.skipped
        progress.plans = run.plans
        progress.stopped = run.stopped
        return progress
    }

    /// Asks Redis whether the task's event was stopped (`SlotLayout.stopKey`), or for a release
    /// of devices held for quiet hours, the event that held them: when the task starts
    /// (`force`), then before a page at most every `stopCheckInterval`. A stopped task
    /// writes no more records; those already written commit with its progress, so the status
    /// counts exactly what was delivered before the stop.
    func checkStop(_ run: inout TaskRun, now: ContinuousClock.Instant, force: Bool = false) throws {
        guard !run.stopped, force || now >= run.nextStopCheck else { return }
        run.nextStopCheck = now + Self.stopCheckInterval
        var keys = [layout.stopKey(eventId: run.task.eventId)]
        // A release of devices held for quiet hours stops with the event that held them.
        if run.task.event.quietRelease != nil, let original = QuietRelease.originalEventId(of: run.task.eventId) {
            keys.append(layout.stopKey(eventId: original))
        }
        // One EXISTS per key: on a cluster the two keys may live on different masters.
        let replies = try redis.pipelineBlocking(keys.map { RedisCommand("EXISTS", $0, isReadOnly: true) })
        if try replies.contains(where: { try $0.get().int == 1 }) { run.stopped = true }
    }

    static let stopCheckInterval = Duration.milliseconds(100)

    /// A rehearsal's renditions, one preview per (platform, template) for the whole event
    /// (`SlotLayout.previewsKey`, the first task to render one writes it): the body, its size
    /// and its platform's limit. Kept as long as the status.
    func writePreviews(_ run: TaskRun) throws {
        var commands: [RedisCommand] = []
        let key = layout.previewsKey(eventId: run.task.eventId)
        for entry in run.renditions {
            guard case .deliver(let rendition) = entry.outcome else { continue }
            let preview = RehearsalPreview(
                platform: rendition.platform, template: rendition.templateName, bytes: rendition.payload.count,
                limit: run.payloadLimits[rendition.platform], payload: String(decoding: rendition.payload, as: UTF8.self),
                missingProperties: rendition.missingProperties.isEmpty ? nil : rendition.missingProperties,
                fallbacks: rendition.fallbacks.isEmpty ? nil : rendition.fallbacks)
            commands.append(RedisCommand("HSETNX", key, preview.field, Array(try JSONEncoder().encode(preview))))
        }
        guard !commands.isEmpty else { return }
        commands.append(.expire(key, seconds: configuration.statusTTLSeconds))
        try redis.withPipelineRepliesBlocking(commands) { replies in
            for (index, command) in commands.enumerated() {
                if let error = redis.error(in: replies[index], of: command) { throw error }
            }
        }
    }

    /// Between pages: a bulk lane waits while this process's express lanes work (`ExpressGate`).
    func stepAside() { gate?.yieldIfBusy(budget: &breakingPauseLeft) }

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
