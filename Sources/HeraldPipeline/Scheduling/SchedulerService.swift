import Foundation
import HeraldDomain
import HeraldKafka
import HeraldRedis
import HeraldStreams
import Logging
import ServiceLifecycle
import Synchronization

/// The scheduler role: keeps the due index of its partitions of `herald.scheduled` in Redis
/// and releases each schedule at its time.
///
/// - **The log is the record.** On being assigned a partition the scheduler clears that
///   partition's index and reads the partition from its start (the consumer never commits
///   offsets), and releases nothing from it until it has read to the end it saw at assignment.
///   A flushed Redis (the `built` key gone) makes it read the partition again.
/// - **Exactly once.** A release writes the released events to `herald.events`, the schedule's
///   next state (or its tombstone) to `herald.scheduled` and its status, in one transaction of
///   a producer whose transactional id belongs to the partition: whoever owns the partition
///   next fences the previous owner, and reads the new state before it releases anything.
/// - **Cancelling.** A cancel request on the topic cancels the pending releases, in the same
///   kind of transaction; one read while catching up waits until the partition is read.
public final class SchedulerService: Service, Sendable {
    public let configuration: PipelineConfiguration
    private let logger: Logger
    private let stopping = Atomic<Bool>(false)
    private let readPartitions = Mutex<Set<Int32>>([])
    private let metrics: PipelineMetrics

    /// The worker's: its transactions pass the worker's gate; it reports its progress there.
    private let context: WorkerContext

    public init(
        configuration: PipelineConfiguration, context: WorkerContext = WorkerContext(), logger: Logger = Logger(label: "herald.scheduler")
    ) {
        self.context = context
        self.configuration = configuration
        self.logger = logger
        metrics = context.metrics
    }

    /// The partitions of `herald.scheduled` this scheduler owns and has read to the end: the
    /// ones it releases from.
    public var releasingPartitions: Set<Int32> { readPartitions.withLock { $0 } }

    private func noteReleasing(_ partitions: [Int32: SchedulerPartition]) {
        let releasing = Set(partitions.filter { $0.value.isReleasing }.keys)
        let changed = readPartitions.withLock { current in
            defer { current = releasing }
            return current != releasing
        }
        if changed { metrics.schedulerPartitions.record(releasing.count) }
    }

    private func clock() -> Date { configuration.scheduleClock() }

    public func stop() { stopping.store(true, ordering: .releasing) }

    /// A schedule's next release worked out before its time: everything but the commit.
    struct PreparedRelease: Sendable {
        /// When it falls due: the schedule's next pending release.
        var at: Date
        /// The released events and the schedule's next state (its tombstone when nothing is left).
        var messages: [KafkaOutgoingMessage]
        /// The next state as the index stores it.
        var entry: ScheduleIndex.Entry
        /// Its status, but for the moment of the release.
        var status: StatusRecord
        /// The status's JSON, made ahead too: a terminal status's `completedAt` is written as
        /// `completedPlaceholder`, at `completedAtOffset`, and overwritten at the release.
        var statusJSON: [UInt8]
        var completedAtOffset: Int?

        /// Sets the status (and its JSON) to a release at `now`.
        mutating func stampStatus(releasedAt now: Date) {
            guard let offset = completedAtOffset else { return }
            status.timings.completedAt = now
            let stamp = Array(ISO8601Timestamp.format(now).utf8)
            if stamp.count == PreparedRelease.completedPlaceholderText.count {
                statusJSON.replaceSubrange(offset..<(offset + stamp.count), with: stamp)
            } else {
                statusJSON = StatusCoding.encode(status)
            }
            completedAtOffset = nil
        }

        /// An instant no real release has, whose text is as long as any other's.
        static let completedPlaceholder = Date(timeIntervalSince1970: 253_402_300_799.999)
        static let completedPlaceholderText = Array(ISO8601Timestamp.format(completedPlaceholder).utf8)

        static func make(
            at: Date, messages: [KafkaOutgoingMessage], entry: ScheduleIndex.Entry, status: StatusRecord, released: [String]
        ) -> PreparedRelease {
            var stamped = status
            if status.state.isTerminal { stamped.timings.completedAt = completedPlaceholder }
            let json = StatusCoding.encode(stamped)
            let offset = status.state.isTerminal ? json.firstRange(of: completedPlaceholderText)?.lowerBound : nil
            return PreparedRelease(
                at: at, messages: messages, entry: entry, status: status, statusJSON: offset == nil ? StatusCoding.encode(status) : json,
                completedAtOffset: offset, released: released)
        }
        /// The ids of the released events.
        var released: [String]
    }

    /// How far ahead of their time releases are prepared, and how many at most per partition.
    static let prepareAhead: TimeInterval = 10
    static let preparedPerPartition = 10_000
    /// How long a cancel request read before its schedule waits for it.
    static let awaitedCancelTime: Duration = .seconds(600)
    /// Schedules one release transaction takes at most; more due wait for the next round, a
    /// moment later.
    static let releasesPerTransaction = 5_000

    /// Runs until `stop()` or a graceful shutdown. A failure (Redis or Kafka going away, a
    /// master killed under it) never ends the role: it drops what it holds, pauses (0.5 s
    /// doubling to 30 s while failures repeat) and starts again from the log, as a new owner
    /// of its partitions would. The progress board reports it stalled from the first failure
    /// until a round succeeds, so `/health/ready` and `/health/live` tell the truth.
    public func run() async throws {
        let progress = context.progress.register("scheduler")
        defer { context.progress.unregister(progress) }
        await withGracefulShutdownHandler {
            var failures = 0
            while !stopping.load(ordering: .acquiring) && !Task.isCancelled {
                do {
                    try await runUntilStopped(progress: progress) { failures = 0 }
                    return
                } catch {
                    guard !stopping.load(ordering: .acquiring) && !Task.isCancelled else { return }
                    failures += 1
                    progress.holding()
                    metrics.countError(error)
                    let pause = Self.pause(afterFailures: failures)
                    logger.error(
                        "scheduler failed; reading its partitions again from the log after a pause",
                        metadata: [
                            "error": "\(error)", "failures": "\(failures)",
                            "pauseMs": "\(pause.wholeMilliseconds)",
                        ])
                    let resume = ContinuousClock.now + pause
                    while ContinuousClock.now < resume && !stopping.load(ordering: .acquiring) && !Task.isCancelled {
                        try? await Task.sleep(for: .milliseconds(100))
                    }
                }
            }
        } onGracefulShutdown: {
            self.stop()
        }
    }

    /// 0.5 s after the first failure, doubling up to 30 s.
    static func pause(afterFailures failures: Int) -> Duration {
        .milliseconds(min(30_000, 500 << min(max(failures - 1, 0), 6)))
    }

    /// One life of the role, from joining the group to `stop()`; throws on any failure, after
    /// letting go of its clients. `healthy` is called after every round that went through.
    private func runUntilStopped(progress: ProgressBoard.Entry, healthy: () -> Void) async throws {
        let redis = RedisConnection(configuration: configuration.redis, logger: logger)
        defer { redis.close() }
        let index = ScheduleIndex(redis: redis, layout: configuration.layout)
        let topic = configuration.topics.scheduled
        let changes = Mutex<[KafkaRebalanceEvent]>([])
        let consumer = try KafkaConsumer(
            configuration: configuration.consumerConfiguration(
                group: configuration.schedulerGroup, fetchWaitMaxMs: configuration.taskFetchWaitMaxMs), logger: logger
        ) { event in changes.withLock { $0.append(event) } }
        try consumer.subscribe(topics: [topic])
        logger.info("scheduler starting", metadata: ["group": "\(configuration.schedulerGroup)", "topic": "\(topic)"])
        var partitions: [Int32: SchedulerPartition] = [:]
        var lastBuiltCheck = ContinuousClock.now
        do {
            while !stopping.load(ordering: .acquiring) && !Task.isCancelled {
                for event in changes.withLock({ events in
                    defer { events = [] }
                    return events
                }) {
                    try await handle(event, partitions: &partitions, index: index, consumer: consumer)
                }
                let batch = try await consumer.pollBatch(maxMessages: 500, timeout: pollTimeout(partitions))
                progress.waitingForPartitions(consumer.membership.waiting())
                for number in Set(batch.map(\.partition)).sorted() {
                    let records = batch.filter { $0.partition == number }
                    try await partitions.update(number) { try await apply(records, number: number, partition: &$0, index: index) }
                }
                for number in partitions.keys.sorted() where partitions[number]?.isReleasing == false {
                    try await checkCaughtUp(number, partitions: &partitions, consumer: consumer, index: index)
                }
                if ContinuousClock.now - lastBuiltCheck >= .seconds(1) {
                    lastBuiltCheck = ContinuousClock.now
                    try await rebuildLostIndexes(&partitions, index: index, consumer: consumer)
                    forgetStaleCancels(&partitions)
                }
                noteReleasing(partitions)
                try await releaseDue(&partitions, index: index)
                for number in partitions.keys.sorted() {
                    try await partitions.update(number) { partition in
                        guard partition.isReleasing else { return }
                        try await prepareAhead(number, partition: &partition, index: index)
                    }
                }
                progress.caughtUp()
                healthy()
            }
        } catch {
            await letGo(partitions, consumer)
            throw error
        }
        await letGo(partitions, consumer)
    }

    /// Shuts the partitions' producers down (the next owner's producer fences any open
    /// transaction) and closes the consumer.
    private func letGo(_ partitions: [Int32: SchedulerPartition], _ consumer: KafkaConsumer) async {
        for state in partitions.values { await state.producer?.shutdown() }
        noteReleasing([:])
        try? await consumer.close()
    }

    private func pollTimeout(_ partitions: [Int32: SchedulerPartition]) -> Duration {
        SchedulerPartition.pollTimeout(partitions.values, now: clock(), window: Self.prepareAhead)
    }

    // MARK: Partitions

    private func handle(
        _ event: KafkaRebalanceEvent, partitions: inout [Int32: SchedulerPartition], index: ScheduleIndex, consumer: KafkaConsumer
    ) async throws {
        switch event {
        case .assigned(let assigned):
            // Handled after the fact: a partition taken away again since is skipped (its
            // revocation is the next event).
            func isAssigned(_ number: Int32) throws -> Bool { try consumer.assignment().contains { $0.partition == number } }
            for topicPartition in assigned where try isAssigned(topicPartition.partition) {
                // From the start, whatever was fetched before this event was handled (records of
                // a partition not known here yet are skipped).
                // A partition revoked as it was assigned may fail its seek ("Erroneous state")
                // before the revocation shows in the assignment: a few short retries see which.
                var end: Int64?
                for attempt in 1...5 {
                    do {
                        end = try await readFromStart(topicPartition.partition, consumer: consumer, index: index)
                        break
                    } catch {
                        guard try isAssigned(topicPartition.partition) else { break }
                        if attempt == 5 { throw error }
                        try await Task.sleep(for: .milliseconds(200))
                    }
                }
                guard let end else {
                    logger.info("scheduler partition revoked before it was read", metadata: ["partition": "\(topicPartition.partition)"])
                    continue
                }
                partitions[topicPartition.partition] = SchedulerPartition(catchingUpTo: end)
                logger.info(
                    "scheduler partition assigned; reading it from the start", metadata: ["partition": "\(topicPartition.partition)"])
            }
        case .revoked(let taken), .lost(let taken):
            for topicPartition in taken {
                await partitions.removeValue(forKey: topicPartition.partition)?.producer?.shutdown()
            }
        @unknown default:
            break
        }
    }

    private func checkCaughtUp(
        _ number: Int32, partitions: inout [Int32: SchedulerPartition], consumer: KafkaConsumer, index: ScheduleIndex
    )
        async throws
    {
        guard partitions[number]?.isReleasing == false else { return }
        let position =
            try consumer.position([KafkaTopicPartition(topic: configuration.topics.scheduled, partition: number)]).first?.offset ?? -1
        try await partitions.update(number) { partition in
            guard let cancels = partition.reached(position: position) else { return }
            try await index.markBuilt(number)
            logger.info("scheduler partition read; releasing from it", metadata: ["partition": "\(number)"])
            for eventId in cancels {
                try await cancel(eventId, partition: &partition, number: number, index: index)
            }
        }
    }

    /// Clears a partition's index and seeks to its start; returns the end to read to before
    /// releasing from it.
    private func readFromStart(_ number: Int32, consumer: KafkaConsumer, index: ScheduleIndex) async throws -> Int64 {
        let topic = configuration.topics.scheduled
        try await index.clear(number)
        try await consumer.seek([KafkaTopicPartitionOffset(topic: topic, partition: number, offset: KafkaTopicPartitionOffset.beginning)])
        return try await consumer.queryWatermarkOffsets(topic: topic, partition: number).high
    }

    /// Reads again, from the start, every caught-up partition whose index vanished: what it
    /// knew of the partition starts over too.
    private func rebuildLostIndexes(_ partitions: inout [Int32: SchedulerPartition], index: ScheduleIndex, consumer: KafkaConsumer)
        async throws
    {
        for (number, state) in partitions.sorted(by: { $0.key < $1.key }) where state.isReleasing {
            guard !(try await index.isBuilt(number)) else { continue }
            logger.warning("scheduler index is gone from Redis; reading the partition again", metadata: ["partition": "\(number)"])
            let end = try await readFromStart(number, consumer: consumer, index: index)
            partitions[number] = SchedulerPartition(catchingUpTo: end, producer: state.producer)
        }
    }

    /// Forgets cancel requests whose schedule did not come within `awaitedCancelTime`.
    private func forgetStaleCancels(_ partitions: inout [Int32: SchedulerPartition]) {
        let forgotten = ContinuousClock.now - Self.awaitedCancelTime
        for number in partitions.keys.sorted() {
            for eventId in partitions[number]?.forgetAwaitedCancels(readBefore: forgotten) ?? [] {
                logger.warning(
                    "cancel request whose schedule never came; forgotten", metadata: ["eventId": "\(eventId)", "partition": "\(number)"])
            }
        }
    }

    // MARK: Records

    /// Folds a partition's records into its index: the index writes in one pipeline, a cancel
    /// request after the writes before it. Only a record's head is decoded: the index stores
    /// its JSON as it is.
    private func apply(_ records: [KafkaMessage], number: Int32, partition: inout SchedulerPartition, index: ScheduleIndex) async throws {
        partition.changed()
        var writes: [ScheduleIndex.Write] = []
        let decoder = JSONDecoder()
        for message in records {
            guard let key = message.key.map({ String(decoding: $0, as: UTF8.self) }) else { continue }
            partition.prepared[key] = nil
            guard let value = message.value else {
                writes.append(.remove(key))
                continue
            }
            let head: ScheduleHead
            do {
                head = try decoder.decode(ScheduleHead.self, from: Data(value))
            } catch {
                logger.error(
                    "unreadable record on the schedule topic; skipped",
                    metadata: ["key": "\(key)", "offset": "\(message.offset)", "error": "\(error)"])
                continue
            }
            // The record's key is the schedule's key (`ScheduledEvent.scheduleKey`): the event id,
            // behind its hub's name outside the default hub.
            if !head.isCancel {
                writes.append(.store(.init(eventId: key, revision: head.revision, nextReleaseAt: head.nextReleaseAt, json: value)))
                if partition.isReleasing, partition.awaitedCancels.removeValue(forKey: key) != nil {
                    try await index.apply(writes, partition: number)
                    writes = []
                    logger.info("schedule read after its cancel request; cancelling it", metadata: ["eventId": "\(key)"])
                    try await cancel(key, partition: &partition, number: number, index: index)
                }
            } else if partition.deferCancel(key) {
                continue
            } else {
                try await index.apply(writes, partition: number)
                writes = []
                try await cancel(key, partition: &partition, number: number, index: index)
            }
        }
        try await index.apply(writes, partition: number)
    }

    // MARK: Releases and cancels

    /// The releases one transaction committed, for `finishRelease`.
    struct ReleaseRound: Sendable {
        /// With their statuses as of the release.
        var releases: [PreparedRelease]
        var at: Date
        var preparedBefore: Int
        var commitTime: Duration
    }

    /// Releases what is due on every caught-up partition at one instant: the partitions'
    /// transactions run side by side (each its own producer), and every one has committed
    /// before any index follows, so a crowd due in the same second is not kept waiting by
    /// another partition's commit or by the Redis writes.
    private func releaseDue(_ partitions: inout [Int32: SchedulerPartition], index: ScheduleIndex) async throws {
        let now = clock()
        let owned = partitions.filter { $0.value.isReleasing }
        guard !owned.isEmpty else { return }
        let rounds = try await withThrowingTaskGroup(of: (Int32, SchedulerPartition, ReleaseRound?).self) { group in
            for (number, state) in owned {
                group.addTask {
                    var state = state
                    let round = try await self.releaseDue(number, now: now, partition: &state, index: index)
                    return (number, state, round)
                }
            }
            var rounds: [(Int32, ReleaseRound)] = []
            for try await (number, state, round) in group {
                partitions[number] = state
                if let round { rounds.append((number, round)) }
            }
            return rounds
        }
        for (number, round) in rounds.sorted(by: { $0.0 < $1.0 }) {
            try await partitions.update(number) { try await finishRelease(round, number: number, partition: &$0, index: index) }
        }
    }

    /// Commits what is due (up to `releasesPerTransaction` schedules) in one transaction: each
    /// due schedule's released events, its next state (or tombstone) and its status. Most were
    /// prepared before their time; the others are prepared now. Nil when nothing was committed.
    private func releaseDue(_ number: Int32, now: Date, partition: inout SchedulerPartition, index: ScheduleIndex) async throws
        -> ReleaseRound?
    {
        guard !partition.hasNothingDue(at: now) else { return nil }
        let due = try await index.due(number, through: now, limit: Self.releasesPerTransaction)
        guard !due.isEmpty else { return nil }
        let unprepared = due.filter { partition.prepared[$0] == nil }
        try await prepare(unprepared, number: number, partition: &partition, index: index)
        var round = ReleaseRound(releases: [], at: now, preparedBefore: 0, commitTime: .zero)
        var messages: [KafkaOutgoingMessage] = []
        for eventId in due {
            guard var release = partition.prepared[eventId], release.at <= now else { continue }
            release.stampStatus(releasedAt: now)
            messages += release.messages
            messages.append(StatusCoding.message(release.status, encoded: release.statusJSON, topic: configuration.topics.status))
            round.releases.append(release)
        }
        round.preparedBefore = max(0, round.releases.count - unprepared.count)
        let started = ContinuousClock.now
        guard !round.releases.isEmpty, try await transact(messages, what: "release", number: number, partition: &partition) else {
            return nil
        }
        round.commitTime = ContinuousClock.now - started
        return round
    }

    /// After a release committed: the index and the statuses in Redis follow.
    private func finishRelease(_ round: ReleaseRound, number: Int32, partition: inout SchedulerPartition, index: ScheduleIndex) async throws
    {
        let started = ContinuousClock.now
        try await finish(round.releases.map { ($0.entry, $0.status, $0.statusJSON) }, number: number, partition: &partition, index: index)
        for release in round.releases {
            logger.debug(
                "schedule released",
                metadata: ["eventId": "\(release.entry.eventId)", "releases": "\(release.released.joined(separator: ","))"])
        }
        let late = round.releases.map { round.at.timeIntervalSince($0.at) }
        let committedLate = round.commitTime.wholeMilliseconds * 1_000_000
        for lateness in late { metrics.scheduleLateness.recordNanoseconds(Int64(lateness * 1e9) + committedLate) }
        let events = round.releases.reduce(0) { $0 + $1.released.count }
        metrics.scheduleReleases.increment(by: events)
        logger.info(
            "schedules released",
            metadata: [
                "partition": "\(number)", "schedules": "\(round.releases.count)", "events": "\(events)",
                "lateMs": "\(Int((late.min() ?? 0) * 1_000))-\(Int((late.max() ?? 0) * 1_000))",
                "preparedAhead": "\(round.preparedBefore)", "commitMs": "\(round.commitTime.wholeMilliseconds)",
                "indexMs": "\((ContinuousClock.now - started).wholeMilliseconds)",
            ])
    }

    /// Prepares the releases of schedules that fall due within `prepareAhead`, a batch at a time,
    /// so that a crowd of schedules due in the same second leaves in one quick transaction.
    private func prepareAhead(_ number: Int32, partition: inout SchedulerPartition, index: ScheduleIndex) async throws {
        let now = clock()
        guard partition.needsScan(now: now, at: .now, window: Self.prepareAhead, limit: Self.preparedPerPartition) else { return }
        let batch = 500
        let horizon = now.addingTimeInterval(Self.prepareAhead)
        let soon = try await index.due(number, through: horizon, limit: Self.preparedPerPartition)
        let prepared = partition.prepared
        let unprepared = Array(soon.lazy.filter { prepared[$0] == nil }.prefix(batch))
        if !unprepared.isEmpty { try await prepare(unprepared, number: number, partition: &partition, index: index) }
        partition.scanned(
            horizon: horizon, found: soon.count, limit: Self.preparedPerPartition, newlyPrepared: unprepared.count, batch: batch,
            at: .now)
    }

    /// Prepares the next release of each of the schedules of `keys` (one `HMGET`).
    private func prepare(_ keys: [String], number: Int32, partition: inout SchedulerPartition, index: ScheduleIndex) async throws {
        for scheduled in try await index.items(keys, partition: number) {
            partition.prepared[scheduled.scheduleKey] = try prepare(scheduled, number: number)
        }
    }

    /// The schedule's next release: the pending releases of its earliest pending time.
    private func prepare(_ scheduled: ScheduledEvent, number: Int32) throws -> PreparedRelease? {
        guard let at = scheduled.nextReleaseAt else { return nil }
        var next = scheduled
        next.revision += 1
        var messages: [KafkaOutgoingMessage] = []
        var released: [String] = []
        for position in next.releases.indices where next.releases[position].state == .pending && next.releases[position].releaseAt <= at {
            next.releases[position].state = .released
            let release = next.releases[position]
            var event = scheduled.event.released(release)
            // A released event is published at its release time.
            event.publishedAt = release.releaseAt
            // The id of a sendAt event is already claimed, by the record that scheduled it.
            let claim = release.eventId == scheduled.eventId ? scheduled.claim : ""
            messages.append(
                KafkaOutgoingMessage(
                    topic: configuration.topics.events, key: Array(event.hub.recordKey(release.eventId).utf8),
                    value: event.canonicalJSON(),
                    headers: [KafkaHeader(key: EventPlanner.releaseHeader, value: claim)]
                ))
            released.append(release.eventId)
        }
        let entry = try ScheduleIndex.Entry(next)
        messages.append(stateMessage(next, entry: entry, number: number))
        return PreparedRelease.make(
            at: at, messages: messages, entry: entry, status: StatusRecord.scheduled(next, at: at), released: released)
    }

    /// Cancels what is pending of the schedule of `eventId` (its schedule key).
    private func cancel(_ eventId: String, partition: inout SchedulerPartition, number: Int32, index: ScheduleIndex) async throws {
        let stored = try await index.item(eventId, partition: number)
        if stored == nil, try await statusState(eventId, index: index) == .scheduled {
            // The planner has accepted the schedule, and its record is still to come.
            partition.awaitedCancels[eventId] = ContinuousClock.now
            logger.info(
                "cancel request read before its schedule; cancelling the schedule when it comes", metadata: ["eventId": "\(eventId)"])
            return
        }
        guard var next = stored, !next.pending.isEmpty else {
            // Too late (or unknown): nothing to cancel. A tombstone after the request keeps it
            // from staying the key's latest value on the compacted topic.
            logger.info("cancel request for a schedule with nothing pending; nothing to do", metadata: ["eventId": "\(eventId)"])
            let tombstone = KafkaOutgoingMessage(
                topic: configuration.topics.scheduled, partition: number, key: Array(eventId.utf8), value: nil)
            _ = try await transact([tombstone], what: "tombstone after a late cancel request", number: number, partition: &partition)
            return
        }
        next.revision += 1
        for position in next.releases.indices where next.releases[position].state == .pending {
            next.releases[position].state = .cancelled
        }
        let released = next.releases.filter { $0.state == .released }.count
        let status = StatusRecord.scheduled(
            next, reason: "cancelled with \(released) of \(next.releases.count) releases sent", at: clock())
        let entry = try ScheduleIndex.Entry(next)
        let messages = [stateMessage(next, entry: entry, number: number), StatusCoding.message(status, topic: configuration.topics.status)]
        guard try await transact(messages, what: "cancel", number: number, partition: &partition) else { return }
        try await finish([(entry, status, StatusCoding.encode(status))], number: number, partition: &partition, index: index)
        logger.info("schedule cancelled", metadata: ["eventId": "\(eventId)", "released": "\(released)"])
    }

    /// The state of the event's status in Redis, if it has one.
    private func statusState(_ key: String, index: ScheduleIndex) async throws -> StatusRecord.State? {
        guard let (hub, eventId) = HubName.split(recordKey: key) else { return nil }
        let statusKey = configuration.layout.hub(hub).statusKey(eventId: eventId)
        guard let bytes = try await index.redis.send(.get(statusKey)).bytes else { return nil }
        return try? StatusCoding.decodeStatus(bytes).state
    }

    /// A schedule's next state on this partition: its tombstone once nothing is pending.
    private func stateMessage(_ next: ScheduledEvent, entry: ScheduleIndex.Entry, number: Int32) -> KafkaOutgoingMessage {
        KafkaOutgoingMessage(
            topic: configuration.topics.scheduled, partition: number, key: Array(next.scheduleKey.utf8),
            value: entry.nextReleaseAt == nil ? nil : entry.json)
    }

    /// `messages` in one transaction of the partition's producer. False when it did not commit
    /// (the producer is replaced and the work is done again on the next round).
    ///
    /// The status records go to partitions of `herald.status` that the planner and the fan-out
    /// of this process write too, so they and the commit pass through the process's
    /// `TransactionGate` (on Tansu, overlapping transactions on a partition can hide each other
    /// until the last of them ends). Everything else is queued and acknowledged before, so the
    /// gated part stays short.
    private func transact(_ messages: [KafkaOutgoingMessage], what: String, number: Int32, partition: inout SchedulerPartition) async throws
        -> Bool
    {
        let producer = try await producer(for: number, partition: &partition)
        do {
            try producer.beginTransaction()
            let statusTopic = configuration.topics.status
            for message in messages where message.topic != statusTopic { try producer.enqueue(message) }
            try await producer.flush()
            try await context.transactions.pass {
                for message in messages where message.topic == statusTopic { try producer.enqueue(message) }
                try await producer.commitTransaction()
            }
            return true
        } catch {
            logger.warning(
                "schedule transaction failed; trying again with a new producer",
                metadata: ["work": "\(what)", "partition": "\(number)", "error": "\(error)"])
            try? await producer.abortTransaction()
            await producer.shutdown()
            partition.producer = nil
            return false
        }
    }

    /// After the commit: the index and the statuses in Redis follow, in one pipeline each.
    private func finish(
        _ done: [(entry: ScheduleIndex.Entry, status: StatusRecord, encoded: [UInt8])], number: Int32, partition: inout SchedulerPartition,
        index: ScheduleIndex
    ) async throws {
        for item in done { partition.prepared[item.entry.eventId] = nil }
        // A schedule's next release may fall inside the window: look again.
        partition.changed()
        try await index.apply(done.map { .replace($0.entry) }, partition: number)
        let statuses = done.map {
            StatusScripts.write($0.status, encoded: $0.encoded, layout: configuration.layout, ttlSeconds: configuration.statusTTLSeconds)
        }
        for reply in try await index.redis.pipeline(statuses) { _ = try reply.get() }
    }

    /// The partition's transactional producer: its id names the partition, so the next owner
    /// of the partition fences this one.
    private func producer(for number: Int32, partition: inout SchedulerPartition) async throws -> KafkaProducer {
        if let producer = partition.producer { return producer }
        var producerConfiguration = configuration.transactionalProducerConfiguration(role: "scheduler", lane: nil, forDeliveries: false)
        producerConfiguration.transactionalId = "\(configuration.transactionalIdPrefix)-\(configuration.schedulerGroup)-p\(number)"
        let producer = try KafkaProducer(configuration: producerConfiguration, logger: logger)
        try await producer.initTransactions()
        partition.producer = producer
        return producer
    }
}
