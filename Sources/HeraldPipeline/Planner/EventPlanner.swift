import Foundation
import HeraldDomain
import HeraldKafka
import HeraldRedis
import HeraldRegistry
import Logging
import HeraldStreams

/// The planner role's work on one `herald.events` record, inside the batch's transaction:
/// validate (or dead-letter), claim the event id (de-duplication), check expiry, probe the
/// slots of a narrow audience, and produce the tasks and the `accepted` status (or hand a
/// narrow event's tasks back to be delivered in the same transaction).
///
/// Redis writes (the claim, `herald:status:<id>`) happen before the transaction commits; they
/// are idempotent for a retried record, which is what makes a crash between them and the
/// commit harmless. The claim travels in one pipeline with the probe of a narrow audience, and
/// the batch's statuses are stored in one pipeline (`store`), which the planner role runs
/// while it delivers the batch's narrow events: a one-user event costs the planner's Redis
/// two round trips instead of four.
public final class EventPlanner: Sendable {
    /// What became of one record.
    enum Outcome: String, Sendable, Hashable {
        case planned, duplicate, expired, scheduled
        case deadLetter = "dead_letter"
        case empty
    }

    /// The header of a record the scheduler role released: the de-duplication claim of the
    /// record that scheduled it (empty for a local-time part, whose id is new).
    public static let releaseHeader = "herald-release"

    let configuration: PipelineConfiguration
    let planner: FanoutPlanner
    let redis: RedisConnection
    let logger: Logger
    private let metrics: PipelineMetrics
    /// Partition counts of the task topics as the cluster reports them.
    private let taskPartitions: Int32
    private let expressPartitions: Int32
    /// Partitions of `herald.deliveries`: a correction has a task per partition.
    private let deliveryPartitions: Int32
    /// Tags recently found in every slot, which the probe skips.
    let commonTags = CommonTags()
    /// The deployment's hubs, to refuse events of hubs that do not exist; nil accepts every hub.
    let hubs: HubDirectory?

    init(
        configuration: PipelineConfiguration, redis: RedisConnection, taskPartitions: Int32, expressPartitions: Int32,
        logger: Logger, metrics: PipelineMetrics, hubs: HubDirectory? = nil, deliveryPartitions: Int32? = nil
    ) {
        self.configuration = configuration
        self.deliveryPartitions = max(1, deliveryPartitions ?? configuration.topics.deliveriesPartitions)
        self.hubs = hubs
        var plannerConfiguration = configuration.planner
        plannerConfiguration.slotCount = configuration.layout.slotCount
        self.planner = FanoutPlanner(configuration: plannerConfiguration)
        self.redis = redis
        self.taskPartitions = max(1, taskPartitions)
        self.expressPartitions = max(1, expressPartitions)
        self.logger = logger
        self.metrics = metrics
    }

    /// What a batch leaves to do inside its transaction.
    struct PlannedBatch: Sendable {
        /// Tasks of narrow events, for the caller to deliver in the same transaction when
        /// `plannerDeliversNarrowEvents` is on (otherwise they went to `herald.tasks.express`).
        var narrow: [FanoutTask] = []
        /// Statuses to store in Redis (`store`) before the transaction commits.
        var statuses: [StatusRecord] = []
        /// Partitions of `herald.tasks` written to, for `TaskNotices` once the transaction committed.
        var taskPartitions: Set<KafkaTopicPartition> = []
        /// True once the batch held a breaking alert to send now: the planner signalled it to the
        /// registration writers (`signalBreaking`).
        var signalledBreaking = false
    }

    /// Handles one batch inside the caller's open transaction: queues its tasks, statuses and
    /// dead letters on `producer` and returns what is left to do before the commit.
    func handle(_ batch: [KafkaMessage], producer: KafkaProducer) async throws -> PlannedBatch {
        var planned = PlannedBatch()
        for message in batch {
            let outcome = try await handle(message, producer: producer, planned: &planned, now: configuration.scheduleClock())
            metrics.events(outcome.rawValue).increment()
        }
        if planned.signalledBreaking { await endBreakingSignal() }
        return planned
    }

    /// Stores `statuses` at `herald:status:<id>` in one pipeline (never moving one backwards,
    /// see `StatusScripts`).
    func store(_ statuses: [StatusRecord]) async throws {
        guard !statuses.isEmpty else { return }
        var commands = statuses.map {
            StatusScripts.write($0, layout: configuration.layout, ttlSeconds: configuration.statusTTLSeconds)
        }
        commands += Self.recentCommands(statuses, layout: configuration.layout, ttlSeconds: configuration.statusTTLSeconds)
        for reply in try await redis.pipeline(commands) { _ = try reply.get() }
    }

    /// The hubs' lists of recent events (`SlotLayout.recentKey`) with the events of `statuses`
    /// added (once, at their publish time; rehearsals left out), each list cut to its newest
    /// `recentEventsKept` and living as long as a status.
    static func recentCommands(_ statuses: [StatusRecord], layout: SlotLayout, ttlSeconds: Int) -> [RedisCommand] {
        var byHub: [HubName: [StatusRecord]] = [:]
        for record in statuses where !record.isRehearsal { byHub[record.hub, default: []].append(record) }
        var commands: [RedisCommand] = []
        for (hub, records) in byHub.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            let key = layout.hub(hub).recentKey
            var add: [any RedisArgument] = [key, "NX"]
            for record in records {
                add.append(String(ISO8601Timestamp.milliseconds(record.timings.publishedAt ?? record.timings.acceptedAt)))
                add.append(record.eventId)
            }
            commands.append(RedisCommand("ZADD", arguments: add))
            commands.append(RedisCommand("ZREMRANGEBYRANK", key, "0", String(-(recentEventsKept + 1))))
            commands.append(.expire(key, seconds: ttlSeconds))
        }
        return commands
    }

    /// How many recent events each hub's list keeps.
    static let recentEventsKept = 1_000

    /// One record, step by step: validate it, refuse an unknown hub, route a correction or a
    /// test send, claim its id (with the probe of a narrow audience), then schedule or plan it.
    func handle(_ message: KafkaMessage, producer: KafkaProducer, planned: inout PlannedBatch, now: Date = Date()) async throws -> Outcome {
        // The claim of the record that scheduled this one, if the scheduler released it.
        let releaseOf = message.header(Self.releaseHeader).map { String(decoding: $0, as: UTF8.self) }
        guard let validated = try await validated(message, releaseOf: releaseOf, producer: producer, now: now) else {
            return .deadLetter
        }
        var (event, decision) = validated
        var eventId = event.id ?? Self.derivedId(message)
        event.id = eventId
        guard try await hubExists(event, eventId: eventId, message: message, producer: producer, now: now) else { return .deadLetter }
        if event.publishedAt == nil { event.publishedAt = message.timestamp ?? now }
        // A rehearsal (`dryRun`) is planned and resolved as the event would be, now, under an id
        // of its own and without a claim on the event's, and its tasks write no delivery.
        let rehearsal = message.header(EventPublisher.rehearsalHeader) != nil
        // The event inside the tasks keeps its own id (an event id has no `~`); the tasks, their
        // records and the status carry the rehearsal's.
        if rehearsal {
            eventId = DerivedSend.rehearsal.eventId(of: eventId, partition: message.partition, offset: message.offset)
            decision = .sendNow
        }
        var log = logger
        log[metadataKey: "eventId"] = "\(eventId)"
        if event.correction != nil {
            guard !rehearsal else {
                try await deadLetter(
                    reason: "invalid_event", "a correction cannot be rehearsed; rehearse the corrected text as an event of its own",
                    message: message, eventId: eventId, hub: event.hub, producer: producer, now: now)
                return .deadLetter
            }
            return try await planCorrection(event, eventId: eventId, message: message, producer: producer, planned: &planned, now: now)
        }
        if !rehearsal, event.urgency == .breaking, event.testRecipients == nil, case .sendNow = decision, !planned.signalledBreaking {
            planned.signalledBreaking = true
            await signalBreaking()
        }
        if event.testRecipients != nil, !rehearsal {
            return try await planTestSend(event, eventId: eventId, message: message, producer: producer, planned: &planned, now: now)
        }

        // Only against a whole index (`IndexEpoch`): after Redis lost its data the claims come
        // back with the rebuild, and an audience read from a partial index would be short.
        let layout = configuration.layout.hub(event.hub)
        let epoch = try IndexEpoch.require(await redis.send(IndexEpoch.read(layout)), layout: layout)
        // A release keeps the fingerprint of the event as it was published with its schedule, so
        // a retry of that publish is still recognised as the same event.
        let claim = EventClaim(
            partition: message.partition, offset: message.offset,
            fingerprint: releaseOf.flatMap(EventClaim.init)?.fingerprint ?? EventClaim.fingerprint(of: event))
        let probe = audienceProbe(for: event)
        let probeReplies: ArraySlice<Result<RedisValue, RedisError>>
        let kind: ClaimKind = rehearsal ? .rehearsal : releaseOf.map { ClaimKind.takeOver(from: $0) } ?? .own
        switch try await claimed(
            eventId, claim: claim, kind: kind, probe: probe, layout: layout, message: message, producer: producer, log: log, now: now)
        {
        case .settled(let outcome): return outcome
        case .claimed(let replies): probeReplies = replies
        }

        // A schedule waits on herald.scheduled for the scheduler role to release it.
        if case .schedule(let releases) = decision {
            try enqueueSchedule(
                event, eventId: eventId, releases: releases, claim: claim, producer: producer, planned: &planned, log: log, now: now)
            return .scheduled
        }
        return try await planFanout(
            event, eventId: eventId, claim: rehearsal ? nil : claim, rehearsal: rehearsal, probe: probe, probeReplies: probeReplies,
            epoch: epoch, producer: producer, planned: &planned, log: log, now: now)
    }

    /// The record's event and what its schedule says, or nil once it was dead-lettered (with
    /// a `rejected` status when it has an id that nothing else holds).
    private func validated(_ message: KafkaMessage, releaseOf: String?, producer: KafkaProducer, now: Date) async throws -> (
        NotificationEvent, ScheduleRules.Decision
    )? {
        do throws(ValidationFailure) {
            guard let value = message.value else {
                throw ValidationFailure(issues: [
                    ValidationIssue(field: "", code: "empty_record", message: "the record has no value (a tombstone)")
                ])
            }
            let event = try NotificationEvent.decode(value, limits: releaseOf == nil ? configuration.eventLimits : releaseLimits)
            // A schedule's times are judged now: too late or too far ahead is a dead letter.
            let id = event.id ?? Self.derivedId(message)
            return (event, try configuration.scheduleRules.decide(event, eventId: id, now: now))
        } catch {
            let letter = DeadLetter(failure: error, message: message, now: now)
            try producer.enqueue(letter.outgoing(topic: configuration.topics.eventsDeadLetters))
            metrics.deadLetters(letter.reason).increment()
            logger.warning(
                "event dead-lettered",
                metadata: [
                    "reason": "\(letter.reason)",
                    "eventId": "\(letter.eventId ?? "-")", "source": "\(message.topic)/\(message.partition)/\(message.offset)",
                    "message": "\(letter.message)",
                ]
            )
            if let id = letter.eventId {
                let record = StatusRecord.rejected(eventId: id, reason: "\(letter.reason): \(letter.message)", publishedAt: nil, at: now)
                try enqueueStatus(record, producer: producer)
                // Only when nothing is known about the id: a broken copy of an accepted event
                // must not hide that event's real status.
                _ = try await redis.send(
                    .set(
                        configuration.layout.statusKey(eventId: id), StatusCoding.encode(record),
                        expireSeconds: configuration.statusTTLSeconds, onlyIfAbsent: true
                    ))
            }
            return nil
        }
    }

    /// False once an event of a hub that does not exist (never created, or deleted) was
    /// dead-lettered; the hubs are read again before that is decided, so a hub created a
    /// moment ago counts.
    private func hubExists(_ event: NotificationEvent, eventId: String, message: KafkaMessage, producer: KafkaProducer, now: Date)
        async throws -> Bool
    {
        guard !event.hub.isDefault, let hubs, try await hubs.hub(event.hub, strict: true) == nil else { return true }
        let letter = DeadLetter(
            reason: "unknown_hub", message: "hub \"\(event.hub)\" does not exist; create it with PUT /v1/hubs/\(event.hub)",
            source: message, now: now)
        try producer.enqueue(letter.outgoing(topic: configuration.topics.eventsDeadLetters))
        metrics.deadLetters(letter.reason).increment()
        logger.warning("event dead-lettered", metadata: ["reason": "unknown_hub", "hub": "\(event.hub)", "eventId": "\(eventId)"])
        return false
    }

    /// The tags of a narrow audience to count per slot: `tags` all of them, `probed` those not
    /// known to be in every slot (`known`, learned in the default hub only, which holds most
    /// registrations); nil tags for an audience that is not narrow.
    struct AudienceProbe {
        var tags: [String]?
        var known: [String]
        var probed: [String]
    }

    private func audienceProbe(for event: NotificationEvent) -> AudienceProbe {
        let tags = planner.tagsToProbe(event)
        let known = event.hub.isDefault ? tags?.filter { commonTags.contains($0) } ?? [] : []
        return AudienceProbe(tags: tags, known: known, probed: tags?.filter { !known.contains($0) } ?? [])
    }

    /// How a record claims its event id.
    enum ClaimKind {
        /// A rehearsal holds no claim: it goes on as the claim's holder would.
        case rehearsal
        /// The record claims the id unless another holds it.
        case own
        /// A release takes the claim over from the record that scheduled it (its claim).
        case takeOver(from: String)
    }

    /// What claiming an event id settled.
    enum ClaimStep {
        /// The record holds the claim: go on, with the probe's replies.
        case claimed(probeReplies: ArraySlice<Result<RedisValue, RedisError>>)
        /// Nothing more to do: a duplicate skipped, or a conflicting one dead-lettered.
        case settled(Outcome)
    }

    /// De-duplication: the first record with this id wins, and a retry of that same record
    /// (after a crash before the commit) finds its own claim. A later record with the same id
    /// is skipped when its content is the same, and dead-lettered when it is not. The narrow
    /// audience's probe goes in the same round trip (unused for a duplicate).
    private func claimed(
        _ eventId: String, claim: EventClaim, kind: ClaimKind, probe: AudienceProbe, layout: SlotLayout, message: KafkaMessage,
        producer: KafkaProducer, log: Logger, now: Date
    ) async throws -> ClaimStep {
        let claimKey = layout.eventClaimKey(eventId: eventId)
        let ttl = configuration.eventClaimTTLSeconds
        var commands: [RedisCommand] = []
        switch kind {
        case .rehearsal: break
        case .own: commands = [.set(claimKey, claim.description, expireSeconds: ttl, onlyIfAbsent: true), .get(claimKey)]
        case .takeOver(let scheduling):
            commands = [
                .evalScript(Self.takeOverClaim, keys: [claimKey], arguments: [scheduling, claim.description, String(ttl)]), .get(claimKey),
            ]
        }
        let probeStart = commands.count
        commands += probeCommands(tags: probe.probed, layout: layout)
        var replies: [Result<RedisValue, RedisError>] = []
        if !commands.isEmpty { replies = try await redis.pipeline(commands) }
        let holderText: String? = if case .rehearsal = kind { claim.description } else { try replies[1].get().string }
        let holder = holderText.flatMap(EventClaim.init)
        if let holder, holder.isSameRecord(as: claim) { return .claimed(probeReplies: replies[probeStart...]) }
        if let holder, holder.conflicts(with: claim.fingerprint) {
            let letter = DeadLetter(
                reason: "duplicate_id_conflict",
                message:
                    "event id \(eventId) was already used by the record at partition \(holder.partition), offset \(holder.offset), with other content; publish this event under a new id",
                source: message, now: now
            )
            try producer.enqueue(letter.outgoing(topic: configuration.topics.eventsDeadLetters))
            metrics.deadLetters(letter.reason).increment()
            log.warning(
                "event dead-lettered", metadata: ["reason": "duplicate_id_conflict", "claimedBy": "\(holder)", "record": "\(claim)"])
            return .settled(.deadLetter)
        }
        log.info("duplicate event skipped", metadata: ["claimedBy": "\(holderText ?? "?")", "record": "\(claim)"])
        return .settled(.duplicate)
    }

    /// Queues the schedule on `herald.scheduled`, where it waits for the scheduler role, and
    /// its `scheduled` status.
    private func enqueueSchedule(
        _ event: NotificationEvent, eventId: String, releases: [ScheduledRelease], claim: EventClaim, producer: KafkaProducer,
        planned: inout PlannedBatch, log: Logger, now: Date
    ) throws {
        let topics = configuration.topics
        let scheduled = ScheduledEvent(eventId: eventId, event: event, scheduledAt: now, releases: releases, claim: claim.description)
        try producer.enqueue(
            KafkaOutgoingMessage(
                topic: topics.scheduled, partition: topics.scheduledPartition(of: scheduled.scheduleKey),
                key: Array(scheduled.scheduleKey.utf8),
                value: Array(try JSONEncoder().encode(ScheduleRecord.schedule(scheduled)))))
        let record = StatusRecord.scheduled(scheduled, at: now)
        try enqueueStatus(record, producer: producer, claim: claim)
        planned.statuses.append(record)
        log.info(
            "event scheduled",
            metadata: [
                "releases": "\(releases.count)",
                "first": "\(releases.first.map { ISO8601Timestamp.format($0.releaseAt) } ?? "-")",
            ])
    }

    /// Plans the fan-out: the probed slots of a narrow audience, an estimate of a wide one, and
    /// the tasks (or `expired`), with the hub's rules in each task; the index must not have been
    /// rebuilt meanwhile (`epoch`). `claim` nil: a rehearsal's.
    private func planFanout(
        _ event: NotificationEvent, eventId: String, claim: EventClaim?, rehearsal: Bool, probe: AudienceProbe,
        probeReplies: ArraySlice<Result<RedisValue, RedisError>>, epoch: String, producer: KafkaProducer, planned: inout PlannedBatch,
        log: Logger, now: Date
    ) async throws -> Outcome {
        let layout = configuration.layout.hub(event.hub)
        var candidates: [Int]?
        var counts: SlotTagCounts?
        if probe.tags != nil {
            let counted = try SlotTagCounts(tags: probe.probed, replies: probeReplies)
            if event.hub.isDefault { commonTags.learn(counted, slotCount: layout.slotCount) }
            candidates = candidateSlots(counted, known: probe.known, event: event)
            counts = counted
        }
        var estimate: Int?
        if event.direct == nil, candidates.map({ $0.count > planner.configuration.narrowSlotLimit }) ?? true {
            estimate = try await audienceEstimate(
                slots: candidates, expression: event.audience.expression, probed: counts, hub: event.hub)
        }
        try IndexEpoch.verify(await redis.send(IndexEpoch.read(layout)), unchanged: epoch, layout: layout)
        switch planner.plan(event, eventId: eventId, candidateSlots: candidates, audienceEstimate: estimate, now: now) {
        case .expired:
            let record = StatusRecord.expired(
                eventId: eventId, expiresAt: event.expiresAt ?? now, publishedAt: event.publishedAt, at: now, hub: event.hub)
            try enqueueStatus(record, producer: producer, claim: claim)
            planned.statuses.append(record)
            log.info("event expired before fan-out")
            return .expired
        case .tasks(var tasks, let lane):
            let narrow = event.direct != nil || candidates.map { $0.count <= planner.configuration.narrowSlotLimit } ?? false
            let rules = try await hubRules(of: event.hub)
            for index in tasks.indices {
                tasks[index].rehearsal = rehearsal
                tasks[index].frequencyCaps = rules.caps
                tasks[index].quietHoursHoldBreaking = rules.holdBreaking
                tasks[index].maxPayloadBytes = rules.maxPayloadBytes
            }
            return try enqueue(
                tasks, lane: lane, narrow: narrow, event: event, eventId: eventId, claim: claim, producer: producer,
                planned: &planned, now: now, estimate: estimate, log: log)
        }
    }

    /// A test send (`testRecipients`): no claim on the event's id, which stays free for the
    /// real send; one express task over every slot under the test send's own id (`DerivedSend`),
    /// which its deliveries and status carry.
    func planTestSend(
        _ event: NotificationEvent, eventId: String, message: KafkaMessage, producer: KafkaProducer, planned: inout PlannedBatch,
        now: Date
    ) async throws -> Outcome {
        // The event inside the task keeps its own id (an event id has no `~`); the task, its
        // records and the status carry the test send's.
        let testId = DerivedSend.test.eventId(of: eventId, partition: message.partition, offset: message.offset)
        var log = logger
        log[metadataKey: "eventId"] = "\(testId)"
        let layout = configuration.layout.hub(event.hub)
        _ = try IndexEpoch.require(await redis.send(IndexEpoch.read(layout)), layout: layout)
        if try expired(event, id: testId, producer: producer, planned: &planned, now: now) { return .expired }
        var task = FanoutTask(eventId: testId, taskIndex: 0, taskCount: 1, slots: 0..<layout.slotCount, event: event, plannedAt: now)
        // What the editor sees is what the hub's devices would get: its payload bound holds.
        task.maxPayloadBytes = try await hubRules(of: event.hub).maxPayloadBytes
        return try enqueue(
            [task], lane: .express, narrow: true, event: event, eventId: testId, claim: nil, producer: producer, planned: &planned,
            now: now, estimate: nil, log: log)
    }

    /// A correction (`correction`): no claim on the event's id; one express task per partition of
    /// `herald.deliveries` under the correction's own id (`DerivedSend.correction`), each reading
    /// the original's records on its partition (`CorrectionAudience`). The original must have
    /// completed its fan-out, so all of its records are on the topic; the correction is listed
    /// with it (`SlotLayout.correctionsKey`).
    func planCorrection(
        _ event: NotificationEvent, eventId: String, message: KafkaMessage, producer: KafkaProducer, planned: inout PlannedBatch,
        now: Date
    ) async throws -> Outcome {
        let correctionId = DerivedSend.correction.eventId(of: eventId, partition: message.partition, offset: message.offset)
        var log = logger
        log[metadataKey: "eventId"] = "\(correctionId)"
        let layout = configuration.layout.hub(event.hub)
        _ = try IndexEpoch.require(await redis.send(IndexEpoch.read(layout)), layout: layout)
        let stored = try await redis.send(.get(layout.statusKey(eventId: eventId))).bytes
        let original = try stored.map { try StatusCoding.decodeStatus(Array($0)) }
        guard let original, original.state == .completed else {
            let reason = original.map { "event \(eventId) is \($0.state.rawValue); only an event whose fan-out completed can be corrected" }
            try await deadLetter(
                reason: original == nil ? "unknown_event" : "event_not_completed",
                reason ?? "no event \(eventId) is known (its status expired or it was never sent)", message: message,
                eventId: correctionId, hub: event.hub, producer: producer, now: now)
            return .deadLetter
        }
        if try expired(event, id: correctionId, producer: producer, planned: &planned, now: now) { return .expired }
        let maxPayloadBytes = try await hubRules(of: event.hub).maxPayloadBytes
        let tasks = (0..<deliveryPartitions).map { partition in
            var task = FanoutTask(
                eventId: correctionId, taskIndex: Int(partition), taskCount: Int(deliveryPartitions), slots: 0..<layout.slotCount,
                event: event, plannedAt: now)
            task.correction = FanoutTask.CorrectionSource(partition: partition, since: original.timings.acceptedAt)
            task.maxPayloadBytes = maxPayloadBytes
            return task
        }
        let listed = layout.correctionsKey(eventId: eventId)
        for reply in try await redis.pipeline([
            .sadd(listed, [correctionId]), .expire(listed, seconds: configuration.statusTTLSeconds),
        ]) { _ = try reply.get() }
        log.info(
            "correction planned",
            metadata: ["of": "\(eventId)", "withdraw": "\(event.correction?.withdraw ?? false)", "by": "\(event.correction?.by ?? "-")"])
        return try enqueue(
            tasks, lane: .express, narrow: false, event: event, eventId: correctionId, claim: nil, producer: producer, planned: &planned,
            now: now, estimate: nil, log: log)
    }

    /// True, with an `expired` status under `id`, when `event` is already past its `expiresAt`.
    private func expired(_ event: NotificationEvent, id: String, producer: KafkaProducer, planned: inout PlannedBatch, now: Date)
        throws -> Bool
    {
        guard let expiresAt = event.expiresAt, expiresAt <= now else { return false }
        let record = StatusRecord.expired(eventId: id, expiresAt: expiresAt, publishedAt: event.publishedAt, at: now, hub: event.hub)
        try enqueueStatus(record, producer: producer)
        planned.statuses.append(record)
        return true
    }

    /// Dead-letters the event of `message` for a reason found while planning it, with a
    /// `rejected` status under `eventId`.
    private func deadLetter(
        reason: String, _ text: String, message: KafkaMessage, eventId: String, hub: HubName, producer: KafkaProducer, now: Date
    ) async throws {
        let letter = DeadLetter(reason: reason, message: text, source: message, now: now)
        try producer.enqueue(letter.outgoing(topic: configuration.topics.eventsDeadLetters))
        metrics.deadLetters(letter.reason).increment()
        logger.warning("event dead-lettered", metadata: ["reason": "\(reason)", "eventId": "\(eventId)", "message": "\(text)"])
        var record = StatusRecord.rejected(eventId: eventId, reason: "\(reason): \(text)", publishedAt: nil, at: now)
        record.hub = hub
        try enqueueStatus(record, producer: producer)
        _ = try await redis.send(
            .set(
                configuration.layout.hub(hub).statusKey(eventId: eventId), StatusCoding.encode(record),
                expireSeconds: configuration.statusTTLSeconds,
                onlyIfAbsent: true))
    }

    /// Puts the event's tasks on their lane's topic (or with the planner's own deliveries, for
    /// a `narrow` event when `plannerDeliversNarrowEvents`; a wide breaking one takes the
    /// express lanes), with its `accepted` status.
    private func enqueue(
        _ tasks: [FanoutTask], lane: TaskLane, narrow: Bool, event: NotificationEvent, eventId: String, claim: EventClaim?,
        producer: KafkaProducer, planned: inout PlannedBatch, now: Date, estimate: Int?, log: Logger
    ) throws -> Outcome {
        let topics = configuration.topics
        let inline = lane == .express && narrow && configuration.plannerDeliversNarrowEvents
        if inline {
            planned.narrow.append(contentsOf: tasks)
        } else {
            let topic = lane == .express ? topics.expressTasks : topics.tasks
            let partitions = lane == .express ? expressPartitions : taskPartitions
            let start = Int32(truncatingIfNeeded: SlotLayout(slotCount: 1 << 14).slot(of: eventId)) % partitions
            let encoder = JSONEncoder()
            for task in tasks {
                let partition = FanoutPlanner.partition(
                    ofTask: task.taskIndex, taskCount: tasks.count, start: start, partitions: partitions)
                try producer.enqueue(
                    KafkaOutgoingMessage(
                        topic: topic, partition: partition, key: Array(eventId.utf8), value: Array(try encoder.encode(task))
                    ))
                if lane == .bulk { planned.taskPartitions.insert(KafkaTopicPartition(topic: topic, partition: partition)) }
            }
        }
        var record = StatusRecord.accepted(
            eventId: eventId, taskCount: tasks.count, publishedAt: event.publishedAt, acceptedAt: now, hub: event.hub)
        if tasks.isEmpty {
            // No slot holds the audience's tags: complete now, with nothing delivered.
            record = StatusAggregate(accepted: record).record
        }
        try enqueueStatus(record, producer: producer, claim: claim)
        planned.statuses.append(record)
        metrics.tasks.increment(by: tasks.count)
        log.info(
            "event planned",
            metadata: [
                "tasks": "\(tasks.count)", "lane": "\(lane.rawValue)", "deliveredBy": "\(inline ? "planner" : "fanout")",
                "audienceEstimate": "\(estimate.map(String.init) ?? "-")",
            ])
        return tasks.isEmpty ? .empty : .planned
    }

    /// What `hub`'s tasks carry of its rules: its frequency caps (nil: none), whether it holds
    /// breaking alerts in quiet hours (the default hub's: `HERALD_FREQUENCY_CAPS`,
    /// `HERALD_QUIET_HOURS_HOLD_BREAKING`) and its largest payload (nil: the platforms' own).
    func hubRules(of hub: HubName) async throws -> (caps: [FrequencyCap]?, holdBreaking: Bool, maxPayloadBytes: Int?) {
        if hub.isDefault {
            return (configuration.frequencyCaps.isEmpty ? nil : configuration.frequencyCaps, configuration.quietHoursHoldBreaking, nil)
        }
        let definition = try await hubs?.hub(hub)
        let caps = definition?.frequencyCaps ?? []
        return (caps.isEmpty ? nil : caps, definition?.quietHoursHoldBreaking ?? false, definition?.limits.maxPayloadBytes)
    }

    /// The id of an event published without one: where its record is.
    static func derivedId(_ message: KafkaMessage) -> String {
        "\(message.topic):\(message.partition):\(message.offset)"
    }

    /// The limits a released record is read with: the deployment's, except that its audience
    /// (the publisher's expression and the zones of its part, which are Herald's) has no
    /// tag-count ceiling.
    private var releaseLimits: EventLimits {
        var limits = configuration.eventLimits
        limits.tagExpression = TagExpressionLimits(maxLength: .max, maxTags: .max)
        return limits
    }

    /// Hands the claim of an id to a release record. KEYS[1] claim; ARGV: the claim of the
    /// record that scheduled it, the release's claim, TTL seconds. Taken when the id is
    /// unclaimed (a local-time part, or a claim that expired while the event waited) or still
    /// held by the scheduling record; a retried release finds its own claim.
    static let takeOverClaim = RedisScript(
        #"""
        local current = redis.call('GET', KEYS[1])
        if not current or current == ARGV[1] then
          redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3])
        end
        return 1
        """#)

    /// Expressions with more distinct tags than this are sized by their slots' registrations.
    static let estimatedTagLimit = 8

    /// Slots whose bitmaps the planner evaluates an expression on to correct its estimate.
    static let sampledSlots = 4

    /// Slots whose bitmaps size the audience of an event over every slot, when the
    /// expression's tags have bitmaps in all of them (`sampledAudience`).
    static let audienceSampleSlots = 16

    /// The audience of a wide event in `slots` (all slots when nil), which sizes its tasks.
    ///
    /// Over every slot, with an expression of a few tags that have bitmaps in the sampled
    /// slots: `sampledAudience`. Otherwise one pipelined `SCARD` of each slot's `all` set and,
    /// for an expression of a few tags, of each tag's set there that `probed` does not already
    /// hold; each slot's share is `TagExpression.estimatedShare`, which takes tags as
    /// independent. Tags rarely are (a reader who follows World and Politics is less likely to
    /// follow a third category too), so the estimate is then scaled by the expression's exact
    /// audience over its estimate in up to `sampledSlots` slots where every tag has a bitmap
    /// (`sampleCorrection`). Without an expression (or with too many tags) it is the
    /// registrations, an upper bound.
    func audienceEstimate(
        slots: [Int]?, expression: TagExpression?, probed: SlotTagCounts? = nil, hub: HubName = .default
    ) async throws -> Int {
        let layout = configuration.layout.hub(hub)
        let chosen = slots ?? Array(0..<layout.slotCount)
        guard !chosen.isEmpty else { return 0 }
        let tags = expression.map { $0.referencedTags.sorted() } ?? []
        let estimated = tags.count <= Self.estimatedTagLimit ? tags : []
        if let expression, !estimated.isEmpty, chosen.count == layout.slotCount,
            let sampled = try await sampledAudience(expression: expression, hub: hub)
        {
            return sampled
        }
        let asked = estimated.filter { probed?.has($0) != true }
        let commands = SlotTagSizes.commands(layout: layout, slots: chosen, tags: asked)
        let sizes = SlotTagSizes(tags: asked, counts: try await redis.pipeline(commands).map { try $0.get().int ?? 0 })
        func count(_ tag: String, at position: Int) -> Int {
            probed?.count(tag, slot: chosen[position]) ?? sizes.count(tag, at: position)
        }
        guard let expression, !estimated.isEmpty else {
            return chosen.indices.reduce(0) { $0 + sizes.registrations(at: $1) }
        }
        let estimates = chosen.indices.map { position in
            let registrations = sizes.registrations(at: position)
            return expression.estimatedShare(registrations: registrations) { count($0, at: position) } * Double(registrations)
        }
        // Slots where the bitmaps can say exactly who the audience is.
        let measurable = chosen.indices.filter { position in
            estimates[position] > 0
                && estimated.allSatisfy {
                    let size = count($0, at: position)
                    return size == 0 || size >= SlotLayout.bitmapThreshold
                }
        }
        let correction = try await sampleCorrection(
            expression: expression, slots: measurable.map { chosen[$0] }, estimates: measurable.map { estimates[$0] }, hub: hub)
        return Int((estimates.reduce(0, +) * correction).rounded(.up))
    }

    /// The audience of `expression` over every slot, from its exact audience in
    /// `audienceSampleSlots` slots spread over them (one pipeline of `MGET`s of their bitmaps)
    /// scaled to the slot count: ids hash evenly over the slots. Nil when a sampled slot has a
    /// tag without a bitmap (a rare tag, which the sizes of its sets estimate better). An
    /// event over common tags is sized by 16 reads instead of a `SCARD` per slot and tag.
    func sampledAudience(expression: TagExpression, hub: HubName = .default) async throws -> Int? {
        let slotCount = configuration.layout.slotCount
        let count = min(Self.audienceSampleSlots, slotCount)
        let matcher = TagMatcher(expression)
        var exact = 0
        for bitmaps in try await readBitmaps(slots: (0..<count).map { $0 * slotCount / count }, tags: matcher.tags, hub: hub) {
            guard let bitmaps else { return nil }
            exact += bitmaps.matching(matcher).reduce(0) { $0 + $1.nonzeroBitCount }
        }
        return Int((Double(exact) * Double(slotCount) / Double(count)).rounded(.up))
    }

    /// The bitmaps of `tags` in `slots` (`SlotBitmapsRead`): nil for a slot where a tag has
    /// registrations but no bitmap.
    private func readBitmaps(slots: [Int], tags: [String], hub: HubName) async throws -> [SlotBitmaps?] {
        var read = SlotBitmapsRead(layout: configuration.layout.hub(hub), slots: slots, tags: tags)
        let sizes = try read.received(await redis.pipeline(read.commands))
        return try read.bitmaps(sizes: sizes.isEmpty ? [] : await redis.pipeline(sizes))
    }

    /// The exact audience of `expression` over its estimate, in up to `sampledSlots` of `slots`
    /// spread over them (`estimates`: each slot's estimate), read from the slots' bitmaps in one
    /// pipeline; 1 when there is no such slot.
    func sampleCorrection(expression: TagExpression, slots: [Int], estimates: [Double], hub: HubName = .default) async throws -> Double {
        guard !slots.isEmpty else { return 1 }
        let samples = min(Self.sampledSlots, slots.count)
        let picked = (0..<samples).map { $0 * slots.count / samples }
        let matcher = TagMatcher(expression)
        let sampled = try await readBitmaps(slots: picked.map { slots[$0] }, tags: matcher.tags, hub: hub)
        var exact = 0
        var estimate = 0.0
        for (index, bitmaps) in zip(picked, sampled) {
            // A slot whose tag lost its bitmap since the sizes were read says nothing.
            guard let bitmaps else { continue }
            exact += bitmaps.matching(matcher).reduce(0) { $0 + $1.nonzeroBitCount }
            estimate += estimates[index]
        }
        return estimate > 0 ? Double(exact) / estimate : 1
    }

    /// The probe of a narrow audience: one `SCARD` per (slot, tag), slot by slot. Its counts
    /// say which slots may hold the audience and, for a wide one, size it.
    func probeCommands(tags: [String], layout: SlotLayout) -> [RedisCommand] {
        var commands: [RedisCommand] = []
        commands.reserveCapacity(layout.slotCount * tags.count)
        for slot in 0..<layout.slotCount {
            for tag in tags { commands.append(.scard(layout.tagKey(slot: slot, tag: tag))) }
        }
        return commands
    }

    /// Slots where the audience may have members, from the probe's counts.
    func candidateSlots(_ probed: SlotTagCounts, known: [String] = [], event: NotificationEvent) -> [Int] {
        guard let expression = event.audience.expression else { return Array(0..<configuration.layout.slotCount) }
        return (0..<configuration.layout.slotCount).filter { slot in
            let present = Set(known + probed.tags.filter { (probed.count($0, slot: slot) ?? 0) > 0 })
            return !present.isEmpty && SlotCandidates.mayMatch(expression, present: present.contains)
        }
    }

    private func enqueueStatus(_ record: StatusRecord, producer: KafkaProducer, claim: EventClaim? = nil) throws {
        try producer.enqueue(StatusCoding.message(record, topic: configuration.topics.status, claim: claim?.description))
    }
}
