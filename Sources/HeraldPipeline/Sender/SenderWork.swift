import Foundation
import HeraldDomain
import HeraldKafka
import HeraldPush
import HeraldRedis
import HeraldRegistry
import Logging
import Metrics
import NIOCore
import Synchronization

/// One batch of the sender, inside its transaction:
///
/// 1. read the deliveries (an unreadable record is dead-lettered);
/// 2. read their sent-markers: a delivery a dead sender already pushed gets the receipt it
///    recorded, and is not sent again; a delivery of a stopped event is `cancelled`;
/// 3. push the others, all at once (the connections bound what is in flight), each retried
///    by `SenderConfiguration.retry` until it has its outcome; every outcome of a request is
///    written as a sent-marker as soon as it is known (in small pipelines);
/// 4. remove the registrations of `unregistered` answers through the registry;
/// 5. count the outcomes per event in Redis (exactly once, by offset);
/// 6. leave the receipts to queue in the gate, where the loop commits them with the offsets;
///    then the markers go.
///
/// What remains: a sender killed between a service's answer and the marker's write (the
/// answers of about 2 ms and one Redis round trip) sends those deliveries again on restart, and so
/// does one killed while a request was on its way (the service has it, the sender has no
/// answer).
final class SenderWork: Sendable {
    /// A delivery of the batch. A class: the answers' callbacks and the retries hold it by
    /// reference (copying a `DeliveryRecord` retains each of its strings).
    final class Item: Sendable {
        let message: KafkaMessage
        let delivery: DeliveryRecord
        /// `delivery.deliveryId`, built once.
        let deliveryId: String

        init(message: KafkaMessage, delivery: DeliveryRecord) {
            self.message = message
            self.delivery = delivery
            deliveryId = delivery.deliveryId
        }
    }

    let configuration: PipelineConfiguration
    let gateways: HubPushGateways
    let registry: RegistrationService?
    let redis: RedisConnection
    let logger: Logger
    let metrics: PipelineMetrics
    /// `herald_push_requests_total` by platform, looked up once.
    private let requestCounters: [Platform: Counter]
    /// Which events were stopped, remembered across batches.
    let stops = StopChecks()

    init(
        configuration: PipelineConfiguration, gateways: HubPushGateways, registry: RegistrationService?, redis: RedisConnection,
        logger: Logger, metrics: PipelineMetrics
    ) {
        self.configuration = configuration
        self.gateways = gateways
        self.registry = registry
        self.redis = redis
        self.logger = logger
        self.metrics = metrics
        requestCounters = Dictionary(uniqueKeysWithValues: Platform.allCases.map { ($0, metrics.pushRequests($0.rawValue)) })
    }

    var layout: SlotLayout { configuration.layout }

    func handle(_ batch: [KafkaMessage], producer: KafkaProducer) async throws -> TransactionalLoop.BatchWork {
        let started = ContinuousClock.now
        let items = try PermanentRecordFailure.mapAll(batch, Self.item)
        let recorded = try await readMarkers(items)
        var receipts = [PushReceipt?](repeating: nil, count: items.count)
        var encoded = [[UInt8]](repeating: [], count: items.count)
        var marked: [Int] = []
        for (index, receipt) in recorded {
            receipts[index] = receipt
            marked.append(index)
        }
        // Markers are written as the answers come, each pipeline taking whatever arrived
        // while the previous one was on its way to Redis.
        let markers = MarkerWriter { pending in await self.writeMarkers(pending, items) }
        let outcomes = Outcomes(count: items.count)
        let now = Date()
        let unsent = Set(items.indices.filter { receipts[$0] == nil }.map { EventRef(items[$0].delivery) })
        let stopped = try await stops.stopped(unsent, keyOf: { self.layout.hub($0.hub).stopKey(eventId: $0.id) }, redis: redis)
        var byTransport: [ObjectIdentifier: (transport: any PushTransport, indices: [Int])] = [:]
        var clients: [HubName: HubPushGateways.Choice] = [:]
        for (index, item) in items.enumerated() where receipts[index] == nil {
            let delivery = item.delivery
            if !stopped.isEmpty, stopped.contains(EventRef(delivery)) {
                receipts[index] = .cancelled(delivery, at: now)
                continue
            }
            let choice: HubPushGateways.Choice
            if let known = clients[delivery.hub] {
                choice = known
            } else {
                choice = await gateways.choice(for: delivery.hub)
                clients[delivery.hub] = choice
            }
            guard let transport = choice.transport(for: delivery) else {
                var receipt = PushReceipt.noSender(for: delivery, at: now)
                receipt.reason = choice.missing(delivery)
                receipts[index] = receipt
                continue
            }
            if let expiresAt = delivery.expiresAt, expiresAt <= now {
                receipts[index] = .expired(delivery, at: now)
                continue
            }
            byTransport[ObjectIdentifier(transport as AnyObject), default: (transport, [])].indices.append(index)
        }
        await pushFirstAttempts(byTransport.values.map { $0 }, items, outcomes: outcomes, markers: markers)
        try await pushRetries(outcomes.retries(), items, outcomes: outcomes, markers: markers)
        await markers.finish()
        metrics.pushInFlight.record(await gateways.inFlight)
        for (index, receipt, bytes) in outcomes.decided() {
            receipts[index] = receipt
            encoded[index] = bytes
            if receipt.attempts > 0 { marked.append(index) }
        }
        let final = receipts.map { $0! }
        let sent = ContinuousClock.now
        try await removeUnregistered(final, items)
        await count(final, items)
        let topic = configuration.topics.receipts
        let messages = final.indices.map { index in
            ReceiptCoding.message(
                final[index], encoded: encoded[index].isEmpty ? ReceiptCoding.encode(final[index]) : encoded[index], topic: topic)
        }
        logger.debug(
            "sender batch handled",
            metadata: [
                "deliveries": "\(items.count)", "alreadySent": "\(recorded.count)", "markerWrites": "\(markers.writeCount)",
                "sendMs": "\((sent - started).wholeMilliseconds)", "totalMs": "\((ContinuousClock.now - started).wholeMilliseconds)",
            ])
        let markedIds = marked.map { (EventRef(items[$0].delivery), items[$0].deliveryId) }
        // The receipts are queued in the gate, right before the commit: the sender's loops
        // write the same receipts partitions, and their transactions must not overlap there
        // (`TransactionGate`).
        return TransactionalLoop.BatchWork(
            finish: { producer in
                for message in messages { try producer.enqueue(message) }
            },
            afterCommit: { [self] in
                for receipt in final { metrics.pushReceipts(receipt.platform.rawValue, receipt.outcome.rawValue).increment() }
                await clearMarkers(markedIds)
            })
    }

    // MARK: Reading

    static func item(_ message: KafkaMessage) throws -> Item {
        guard let value = message.value else {
            throw PermanentRecordFailure(reason: "unreadable_delivery", message: "a delivery record without a value", source: message)
        }
        do {
            return Item(message: message, delivery: try DeliveryRecord.decode(value))
        } catch {
            throw PermanentRecordFailure(reason: "unreadable_delivery", message: "\(error)", source: message)
        }
    }

    // MARK: Sending

    /// Every delivery's first request at once, per transport; each answer is decided on the
    /// event loop that read it (no task per delivery), and those to try again are noted.
    func pushFirstAttempts(
        _ groups: [(transport: any PushTransport, indices: [Int])], _ items: [Item], outcomes: Outcomes, markers: MarkerWriter
    ) async {
        var answers: [EventLoopFuture<Void>] = []
        for (transport, indices) in groups {
            let deliveries = indices.map { items[$0].delivery }
            let firstAttempt = ContinuousClock.now
            let sentAt = Date()
            for delivery in deliveries { requestCounters[delivery.platform]?.increment() }
            let attempts = await transport.submit(deliveries)
            metrics.pushInFlight.record(await gateways.inFlight)
            for (index, attempt) in zip(indices, attempts) {
                let item = items[index]
                answers.append(
                    attempt.map { [self] attempt in
                        var progress = Progress(attempts: 1, firstAttempt: firstAttempt)
                        switch decide(item, attempt, sentAt: sentAt, progress: &progress, via: transport) {
                        case .done(let receipt):
                            record(receipt, index, outcomes: outcomes, markers: markers)
                        case .retry(let at):
                            outcomes.retry(index, Retry(at: at, progress: progress, transport: transport))
                        }
                    })
            }
        }
        if let loop = answers.first?.eventLoop {
            _ = try? await EventLoopFuture.whenAllComplete(answers, on: loop).get()
        }
    }

    /// The deliveries to try again, each at its own pace until it has its outcome.
    func pushRetries(_ retries: [(Int, Retry)], _ items: [Item], outcomes: Outcomes, markers: MarkerWriter) async throws {
        try await withThrowingTaskGroup(of: (Int, PushReceipt).self) { group in
            for (index, retry) in retries {
                let item = items[index]
                group.addTask {
                    try await Task.sleep(for: .milliseconds(Int64(max(0, retry.at.timeIntervalSinceNow) * 1000)))
                    return (index, try await self.deliver(item, via: retry.transport, progress: retry.progress))
                }
            }
            for try await (index, receipt) in group { record(receipt, index, outcomes: outcomes, markers: markers) }
        }
    }

    /// Keeps a final receipt for the batch, and marks it sent-and-answered when a request went.
    private func record(_ receipt: PushReceipt, _ index: Int, outcomes: Outcomes, markers: MarkerWriter) {
        let bytes = ReceiptCoding.encode(receipt)
        outcomes.set(index, receipt, bytes)
        if receipt.attempts > 0 { markers.add((index, bytes)) }
    }

    /// Where a delivery stands between its attempts.
    struct Progress: Sendable {
        var attempts = 0
        var firstAttempt: ContinuousClock.Instant?
        var lastStatus: Int?
    }

    /// What follows an attempt.
    enum Step {
        case done(PushReceipt)
        case retry(at: Date)
    }

    /// A delivery waiting for its next attempt.
    struct Retry: Sendable {
        var at: Date
        var progress: Progress
        var transport: any PushTransport
    }

    /// Pushes one delivery, after the attempts in `progress`, until it has its outcome.
    func deliver(_ item: Item, via transport: any PushTransport, progress: Progress = Progress()) async throws -> PushReceipt {
        let delivery = item.delivery
        var progress = progress
        while true {
            try Task.checkCancellation()
            if let expiresAt = delivery.expiresAt, expiresAt <= Date() {
                return .expired(delivery, attempts: progress.attempts, at: Date())
            }
            progress.attempts += 1
            if progress.firstAttempt == nil { progress.firstAttempt = .now }
            requestCounters[delivery.platform]?.increment()
            let sentAt = Date()
            let attempt = await transport.send(delivery)
            switch decide(item, attempt, sentAt: sentAt, progress: &progress, via: transport) {
            case .done(let receipt):
                return receipt
            case .retry(let at):
                try await Task.sleep(for: .milliseconds(Int64(max(0, at.timeIntervalSinceNow) * 1000)))
            }
        }
    }

    /// The receipt an attempt settles, or when to try again (`SenderConfiguration.retry`).
    func decide(_ item: Item, _ attempt: PushAttempt, sentAt: Date, progress: inout Progress, via transport: any PushTransport) -> Step {
        let delivery = item.delivery
        let reason: String
        var retryAfter: TimeInterval?
        switch attempt {
        case .unsendable(let problem):
            progress.attempts -= 1
            return .done(receipt(item, .rejected, progress, reason: problem))
        case .lost(let problem):
            reason = problem
        case .answered(let answer):
            progress.lastStatus = answer.statusCode
            switch transport.verdict(answer) {
            case .sent: return .done(receipt(item, .sent, progress, serviceId: answer.serviceId))
            case .unregistered(let since):
                return .done(receipt(item, .unregistered, progress, reason: answer.reason, unregisteredAt: since ?? sentAt))
            case .rejected(let problem): return .done(receipt(item, .rejected, progress, reason: problem))
            case .failed(let problem): return .done(receipt(item, .failed, progress, reason: problem))
            case .retry(let problem, let after):
                reason = problem
                retryAfter = after
            case .renewCredentials(let problem):
                reason = problem
            }
        }
        let now = Date()
        switch configuration.sender.retry.next(
            afterAttempt: progress.attempts, reason: reason, retryAfter: retryAfter, now: now, expiresAt: delivery.expiresAt,
            unit: Double.random(in: 0..<1))
        {
        case .giveUp(let outcome, let why):
            return .done(receipt(item, outcome, progress, reason: why))
        case .retry(let at):
            metrics.pushRetries(delivery.platform.rawValue, Self.retryLabel(reason)).increment()
            return .retry(at: at)
        }
    }

    func receipt(
        _ item: Item, _ outcome: PushOutcome, _ progress: Progress, reason: String? = nil, serviceId: String? = nil,
        unregisteredAt: Date? = nil
    ) -> PushReceipt {
        let latency = progress.firstAttempt.map { ContinuousClock.now - $0 }
        if let latency, progress.attempts > 0 { metrics.pushLatency.recordNanoseconds(latency.wholeNanoseconds) }
        let delivery = item.delivery
        return PushReceipt(
            deliveryId: item.deliveryId, eventId: delivery.eventId, registrationId: delivery.registrationId,
            platform: delivery.platform,
            outcome: outcome, statusCode: progress.lastStatus, reason: reason, attempts: progress.attempts,
            latencyMs: latency?.wholeMilliseconds, serviceId: serviceId, unregisteredAt: unregisteredAt, decidedAt: Date(),
            hub: delivery.hub)
    }

    /// A bounded label for the retries metric: the service's reason, or the kind of failure.
    static func retryLabel(_ reason: String) -> String {
        if reason == "timeout" { return "timeout" }
        if reason.hasPrefix("connection") || reason.hasPrefix("cancelled") || reason.hasPrefix("no access token")
            || reason.hasPrefix("cannot sign")
        {
            return "connection"
        }
        return reason.count <= 40 && reason.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == " " }) ? reason : "other"
    }

    // MARK: Sent-markers

    /// The receipts recorded by an earlier run of the same batch, by item index.
    func readMarkers(_ items: [Item]) async throws -> [Int: PushReceipt] {
        let byEvent = Dictionary(grouping: items.indices, by: { EventRef(items[$0].delivery) })
        let events = Array(byEvent.keys)
        let replies = try await redis.pipeline(
            events.map { event in .hmget(markersKey(event), byEvent[event]!.map { items[$0].deliveryId }) })
        var recorded: [Int: PushReceipt] = [:]
        for (event, reply) in zip(events, replies) {
            guard case .array(let values) = try reply.get() else { continue }
            for (index, value) in zip(byEvent[event]!, values) {
                if case .bulkString(let bytes) = value, let receipt = ReceiptCoding.decode(bytes) { recorded[index] = receipt }
            }
        }
        return recorded
    }

    /// Records answered deliveries; a failure is logged and the batch goes on (its receipts
    /// still commit; only the crash window widens).
    func writeMarkers(_ pending: [(Int, [UInt8])], _ items: [Item]) async {
        guard !pending.isEmpty else { return }
        let byEvent = Dictionary(grouping: pending, by: { EventRef(items[$0.0].delivery) })
        var commands: [RedisCommand] = []
        for (event, entries) in byEvent {
            let key = markersKey(event)
            commands.append(.hset(key, entries.map { (items[$0.0].deliveryId, $0.1) }))
            commands.append(.expire(key, seconds: configuration.sender.markerTTLSeconds))
        }
        do {
            for result in try await redis.pipeline(commands) { _ = try result.get() }
        } catch {
            metrics.redisErrors.increment()
            logger.warning("cannot write sent-markers; a crash before the commit would send these again", metadata: ["error": "\(error)"])
        }
    }

    func clearMarkers(_ marked: [(event: EventRef, deliveryId: String)]) async {
        guard !marked.isEmpty else { return }
        let byEvent = Dictionary(grouping: marked, by: \.event)
        do {
            _ = try await redis.pipeline(byEvent.map { .hdel(markersKey($0.key), $0.value.map(\.deliveryId)) })
        } catch {
            metrics.redisErrors.increment()
            logger.warning("cannot clear sent-markers; they expire on their own", metadata: ["error": "\(error)"])
        }
    }

    // MARK: After the answers

    /// Removes the registrations the services called unregistered (through the registry,
    /// conditional on their version). A registry that cannot be reached fails the batch,
    /// which is done again without sending anything twice (the markers).
    func removeUnregistered(_ receipts: [PushReceipt], _ items: [Item]) async throws {
        guard let registry else { return }
        // A direct send's handle has no registration: its receipt is the whole answer.
        let dead = receipts.indices.filter {
            receipts[$0].outcome == .unregistered && !DirectTarget.isStandIn(items[$0].delivery.registrationId)
        }
        for index in dead {
            let receipt = receipts[index]
            let delivery = items[index].delivery
            do {
                let result = try await registry.hub(delivery.hub).removeUnregistered(
                    registrationId: delivery.registrationId, pushedHandle: delivery.handle,
                    invalidSince: receipt.unregisteredAt ?? receipt.decidedAt)
                switch result {
                case .removed(let id, let installation):
                    metrics.unregisteredRemovals("removed").increment()
                    logger.info(
                        "registration removed: its token is unregistered",
                        metadata: ["id": "\(id)", "installation": "\(installation)", "deliveryId": "\(delivery.deliveryId)"])
                case .kept(let reason):
                    metrics.unregisteredRemovals("kept").increment()
                    logger.info("registration kept after an unregistered answer", metadata: ["reason": "\(reason)"])
                case .absent:
                    metrics.unregisteredRemovals("absent").increment()
                }
            } catch {
                if error.code == .unavailable || error.code == .timeout { throw RegistryUnavailable(error: error) }
                metrics.unregisteredRemovals("error").increment()
                logger.warning(
                    "cannot remove an unregistered registration", metadata: ["id": "\(delivery.registrationId)", "error": "\(error)"])
            }
        }
    }

    /// Adds the outcomes to each event's counts (`herald:{s}:push:<eventId>`), exactly once, and
    /// the deliveries not sent to its unsent set (`herald:{s}:unsent:<eventId>`).
    /// A failure is logged: the receipts are the record, the counts a view of them.
    func count(_ receipts: [PushReceipt], _ items: [Item]) async {
        struct Group: Hashable {
            var event: EventRef
            var partition: Int32
        }
        var groups: [Group: [(Int64, String)]] = [:]
        for (receipt, item) in zip(receipts, items) {
            let group = Group(event: EventRef(item.delivery), partition: item.message.partition)
            groups[group, default: []].append((item.message.offset, "\(receipt.platform.rawValue):\(receipt.outcome.rawValue)"))
            // The event's reach: when after its publish the service took it (`Reach.sentField`).
            if receipt.outcome == .sent, let publishedAt = item.delivery.publishedAt {
                let elapsed = ISO8601Timestamp.milliseconds(receipt.decidedAt) - ISO8601Timestamp.milliseconds(publishedAt)
                groups[group, default: []].append((item.message.offset, Reach.sentField(elapsedMs: elapsed)))
                metrics.publishToSent.recordNanoseconds(max(0, elapsed) * 1_000_000)
            }
        }
        let ttl = configuration.statusTTLSeconds
        // The deliveries that reached no device, which a correction of the event leaves out.
        var unsent: [EventRef: [String]] = [:]
        for (receipt, item) in zip(receipts, items) where receipt.outcome != .sent {
            unsent[EventRef(item.delivery), default: []].append(item.deliveryId)
        }
        var commands = groups.map { group, entries in
            var arguments = [String(group.partition), String(ttl)]
            for (offset, field) in entries.sorted(by: { $0.0 < $1.0 }) { arguments += [String(offset), field] }
            return RedisCommand.evalScript(
                SenderScripts.countReceipts, keys: [layout.hub(group.event.hub).pushCountsKey(eventId: group.event.id)],
                arguments: arguments)
        }
        for (event, deliveryIds) in unsent {
            let key = layout.hub(event.hub).unsentKey(eventId: event.id)
            commands += [.sadd(key, deliveryIds), .expire(key, seconds: ttl)]
        }
        // A test send's receipts one by one (at most a hundred devices): Azure's test send answers them.
        var tested: [EventRef: [String]] = [:]
        for (receipt, item) in zip(receipts, items) where item.delivery.test {
            tested[EventRef(item.delivery), default: []] += [
                item.delivery.registrationId, receipt.outcome.rawValue + (receipt.reason.map { "\t" + $0 } ?? ""),
            ]
        }
        for (event, fields) in tested {
            let key = layout.hub(event.hub).testOutcomesKey(eventId: event.id)
            commands += [RedisCommand("HSET", arguments: [key] + fields), .expire(key, seconds: ttl)]
        }
        do {
            for result in try await redis.pipeline(commands) { _ = try result.get() }
        } catch {
            metrics.redisErrors.increment()
            logger.warning("cannot count the batch's outcomes", metadata: ["error": "\(error)"])
        }
    }

    /// The sent-markers hash of an event, in its hub's keys.
    func markersKey(_ event: EventRef) -> String { layout.hub(event.hub).sentMarkersKey(eventId: event.id) }
}

/// The registry could not be reached to remove a registration: the batch is done again.
struct RegistryUnavailable: Error, CustomStringConvertible {
    var error: RegistryError
    var description: String { "registry unavailable: \(error)" }
}

/// Writes sent-markers in the background as they are added: each write takes everything
/// added since the previous one started, after waiting `gather` for more to arrive, so the
/// crash window is about one Redis round trip plus `gather`. Without the wait a write carried
/// two or three markers at push speed, and Redis spent about 8 us of CPU per delivery.
final class MarkerWriter: Sendable {
    private final class Pending: Sendable {
        let markers = Mutex<[(Int, [UInt8])]>([])
        let writes = Atomic<Int>(0)
        func take() -> [(Int, [UInt8])] {
            markers.withLock { markers in
                defer { markers.removeAll(keepingCapacity: true) }
                return markers
            }
        }
    }

    private let pending = Pending()
    private let signal: AsyncStream<Void>.Continuation
    private let task: Task<Void, Never>
    /// Writes so far (for the batch's log line).
    var writeCount: Int { pending.writes.load(ordering: .relaxed) }

    init(gather: Duration = .milliseconds(2), write: @escaping @Sendable ([(Int, [UInt8])]) async -> Void) {
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let pending = pending
        signal = continuation
        task = Task {
            for await _ in stream {
                try? await Task.sleep(for: gather)
                let batch = pending.take()
                if !batch.isEmpty {
                    pending.writes.add(1, ordering: .relaxed)
                    await write(batch)
                }
            }
            let rest = pending.take()
            if !rest.isEmpty { await write(rest) }
        }
    }

    func add(_ marker: (Int, [UInt8])) {
        pending.markers.withLock { $0.append(marker) }
        signal.yield()
    }

    /// Writes what is left and returns once every marker added is written (or failed).
    func finish() async {
        signal.finish()
        await task.value
    }
}

/// The outcomes of one batch's deliveries, decided on the event loops that read the answers.
final class Outcomes: Sendable {
    private struct State {
        var decided: [(Int, PushReceipt, [UInt8])] = []
        var retries: [(Int, SenderWork.Retry)] = []
    }

    private let state: Mutex<State>

    init(count: Int) {
        var state = State()
        state.decided.reserveCapacity(count)
        self.state = Mutex(state)
    }

    func set(_ index: Int, _ receipt: PushReceipt, _ bytes: [UInt8]) { state.withLock { $0.decided.append((index, receipt, bytes)) } }
    func retry(_ index: Int, _ retry: SenderWork.Retry) { state.withLock { $0.retries.append((index, retry)) } }
    func retries() -> [(Int, SenderWork.Retry)] { state.withLock { $0.retries } }
    func decided() -> [(Int, PushReceipt, [UInt8])] { state.withLock { $0.decided } }
}

/// Which events were stopped (`SlotLayout.stopKey`, set by `DELETE /v1/notifications/{id}`),
/// asked of Redis at most every `interval` per event, all of a batch's events in one pipeline;
/// a stopped event stays stopped. Events not asked about for a minute are forgotten.
final class StopChecks: Sendable {
    private struct Entry {
        var stopped: Bool
        var checkedAt: ContinuousClock.Instant
    }

    private let entries = Mutex<[EventRef: Entry]>([:])
    let interval: Duration

    init(interval: Duration = .milliseconds(100)) { self.interval = interval }

    /// The stopped ones among `events`. A Redis failure throws (the batch is done again).
    func stopped(
        _ events: Set<EventRef>, keyOf: (EventRef) -> String, redis: RedisConnection, now: ContinuousClock.Instant = .now
    ) async throws -> Set<EventRef> {
        var stopped: Set<EventRef> = []
        var ask: [EventRef] = []
        entries.withLock { entries in
            if entries.count > 1_000 { entries = entries.filter { $0.value.checkedAt + .seconds(60) > now } }
            for event in events {
                if let entry = entries[event], entry.stopped || entry.checkedAt + interval > now {
                    if entry.stopped { stopped.insert(event) }
                } else {
                    ask.append(event)
                }
            }
        }
        guard !ask.isEmpty else { return stopped }
        let replies = try await redis.pipeline(ask.map { RedisCommand("EXISTS", keyOf($0), isReadOnly: true) })
        var answers: [(EventRef, Bool)] = []
        for (event, reply) in zip(ask, replies) {
            let isStopped = try reply.get().int == 1
            answers.append((event, isStopped))
            if isStopped { stopped.insert(event) }
        }
        entries.withLock { entries in
            for (event, isStopped) in answers { entries[event] = Entry(stopped: isStopped, checkedAt: now) }
        }
        return stopped
    }
}

/// An event as the sender groups its deliveries: ids are unique within a hub.
struct EventRef: Hashable, Sendable {
    var hub: HubName
    var id: String

    init(_ delivery: DeliveryRecord) {
        hub = delivery.hub
        id = delivery.eventId
    }
}
