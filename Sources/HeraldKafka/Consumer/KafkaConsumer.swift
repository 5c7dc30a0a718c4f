import CRdKafka
import Dispatch
import Logging
import Synchronization

/// Consumes records through librdkafka, usually as a member of a consumer group.
///
/// Offsets advance only when the owner says so (`storeOffset`/`commit`), never on poll. The
/// blocking poll runs on this consumer's own serial dispatch queue, away from Swift's
/// cooperative pool; rebalance callbacks run there too, inside `poll`/`pollBatch`/`close`.
public final class KafkaConsumer: Sendable {
    public let configuration: KafkaConsumerConfiguration
    /// Assignments, revocations and losses, in order. A worker reads this to drop in-flight
    /// state of partitions it no longer owns. Keeps the newest 256 events if nobody reads.
    public let rebalanceEvents: AsyncStream<KafkaRebalanceEvent>
    /// How long this member has been waiting for its group to assign it partitions.
    public let membership: GroupMembershipClock

    let client: RDKafkaClient
    let logger: Logger
    /// Serial: polls and close never overlap.
    let pollQueue: DispatchQueue
    /// Concurrent: synchronous commits and broker queries must not wait behind a long poll.
    let blockingQueue: DispatchQueue
    private let rebalanceContinuation: AsyncStream<KafkaRebalanceEvent>.Continuation
    private let closed = Atomic<Bool>(false)
    /// Set by `wake()`, taken by the poll it ends.
    private let wakeRequested = Atomic<Bool>(false)

    /// - Parameter onRebalance: called synchronously on the poll thread for every rebalance
    ///   event, before a revocation takes effect; keep it short and non-blocking.
    public init(
        configuration: KafkaConsumerConfiguration,
        logger: Logger = Logger(label: "herald.kafka.consumer"),
        onRebalance: (@Sendable (KafkaRebalanceEvent) -> Void)? = nil
    ) throws {
        self.configuration = configuration
        self.logger = logger
        let (events, continuation) = AsyncStream.makeStream(of: KafkaRebalanceEvent.self, bufferingPolicy: .bufferingNewest(256))
        rebalanceEvents = events
        rebalanceContinuation = continuation
        let membership = GroupMembershipClock()
        self.membership = membership
        let callbacks = RDKafkaCallbacks(logger: logger) { event in
            membership.rebalanced(event)
            onRebalance?(event)
            continuation.yield(event)
        }
        client = try RDKafkaClient(kind: .consumer, properties: configuration.librdkafkaProperties(), callbacks: callbacks)
        try client.redirectMainQueueToConsumer()
        pollQueue = DispatchQueue(label: "herald.kafka.consumer.poll")
        blockingQueue = blockingCallQueue("herald.kafka.consumer.blocking")
    }

    deinit { rebalanceContinuation.finish() }

    /// Joins the consumer group and follows `topics`; partitions arrive through rebalances.
    public func subscribe(topics: [String]) throws {
        try checkOpen("subscribe")
        guard configuration.groupId != nil else {
            throw KafkaError(code: .invalidArgument, message: "subscribe needs a groupId", operation: "subscribe")
        }
        membership.joining()
        try client.subscribe(topics: topics)
    }

    /// Reads exactly these partitions from these offsets, without group membership (for
    /// example to replay a whole compacted topic). Use `KafkaTopicPartitionOffset.beginning`.
    public func assign(_ partitions: [KafkaTopicPartitionOffset]) throws {
        try checkOpen("assign")
        try client.assign(partitions)
    }

    /// The next record, or nil when none arrives within `timeout`.
    public func poll(timeout: Duration = .seconds(1)) async throws -> KafkaMessage? {
        try await pollBatch(maxMessages: 1, timeout: timeout).first
    }

    /// Up to `maxMessages` records (default `maxPollRecords`): waits up to `timeout` for the
    /// first, then takes what is already fetched without waiting further.
    public func pollBatch(maxMessages: Int? = nil, timeout: Duration = .seconds(1)) async throws -> [KafkaMessage] {
        try checkOpen("poll")
        let limit = max(1, min(maxMessages ?? configuration.maxPollRecords, configuration.maxPollRecords))
        let client = client
        return try await runBlocking(on: pollQueue) { [self] in
            try checkOpen("poll")
            let deadline = ContinuousClock.now.advanced(by: timeout)
            var batch: [KafkaMessage] = []
            // Non-record events (errors, rebalances) end a poll early; keep waiting until the
            // deadline, unless `wake()` asked for the poll to end.
            while batch.isEmpty {
                let remaining = ContinuousClock.now.duration(to: deadline)
                if remaining <= .zero || takeWake() { break }
                if let message = try client.consumerPoll(timeoutMs: max(1, remaining.rdKafkaMilliseconds)) {
                    batch.append(message)
                }
            }
            let revocationsBefore = client.callbacks.revocationCount.load(ordering: .acquiring)
            while !batch.isEmpty, batch.count < limit, let message = try client.consumerPoll(timeoutMs: 0) {
                batch.append(message)
            }
            // A rebalance served by a later poll may have taken partitions whose records are
            // already in the batch; handing those out would let two members work on them.
            if client.callbacks.revocationCount.load(ordering: .acquiring) != revocationsBefore {
                let owned = Set(try client.assignment())
                batch.removeAll { !owned.contains($0.topicPartition) }
            }
            return batch
        }
    }

    /// `pollBatch` without copying: up to `maxMessages` records are handed to `body` in place,
    /// on the poll thread, and released when it returns; `body` returns what the caller keeps
    /// (counts, say). For a reader that counts or forwards bytes at a high rate.
    ///
    /// Only for consumers that `assign` their partitions (no group): a group rebalance could
    /// take back a partition whose records `body` has already seen, which `pollBatch` guards
    /// against by dropping them.
    public func pollBorrowing<Result: Sendable>(
        maxMessages: Int? = nil, timeout: Duration = .seconds(1),
        _ body: @escaping @Sendable (KafkaBorrowedBatch) throws -> Result
    ) async throws -> Result {
        try checkOpen("poll")
        guard configuration.groupId == nil else {
            throw KafkaError(code: .invalidArgument, message: "pollBorrowing is for consumers without a group", operation: "poll")
        }
        let limit = max(1, min(maxMessages ?? configuration.maxPollRecords, configuration.maxPollRecords))
        let client = client
        return try await runBlocking(on: pollQueue) { [self] in
            try checkOpen("poll")
            var messages: [UnsafeMutablePointer<rd_kafka_message_t>] = []
            messages.reserveCapacity(min(limit, 4_096))
            defer { for message in messages { rd_kafka_message_destroy(message) } }
            let deadline = ContinuousClock.now.advanced(by: timeout)
            while messages.isEmpty {
                let remaining = ContinuousClock.now.duration(to: deadline)
                if remaining <= .zero || takeWake() { break }
                if let message = try client.consumerPollRecord(timeoutMs: max(1, remaining.rdKafkaMilliseconds)) {
                    messages.append(message)
                }
            }
            while !messages.isEmpty, messages.count < limit, let message = try client.consumerPollRecord(timeoutMs: 0) {
                messages.append(message)
            }
            return try body(KafkaBorrowedBatch(messages: messages))
        }
    }

    /// Leaves the group cleanly (the assignment is revoked through `rebalanceEvents`) and
    /// commits stored offsets if auto-commit is on. Further calls throw.
    ///
    /// With `leaveGroupOnClose` false a group member only disconnects when this consumer is
    /// released (until then it still heartbeats): no revocation, no commit, and the broker
    /// moves its partitions once its session times out.
    public func close() async throws {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let client = client
        defer { rebalanceContinuation.finish() }
        membership.left()
        if configuration.groupId != nil && !configuration.leaveGroupOnClose {
            client.skipsConsumerCloseOnDestroy.store(true, ordering: .releasing)
            return
        }
        // Leaving the group waits for the broker; a stalled one must not hold a shutdown.
        try await runBlocking(on: pollQueue, deadline: .seconds(30), operation: "close consumer") { try client.closeConsumer() }
    }

    public var isClosed: Bool { closed.load(ordering: .acquiring) }

    /// Ends the poll waiting for records now, with nothing, or the next poll at once if none
    /// is waiting: for an owner that has other work to look at (another thread's notice, a
    /// stop) and would otherwise poll with a short timeout to notice it. Safe from any thread.
    public func wake() {
        wakeRequested.store(true, ordering: .releasing)
        client.yieldConsumerPoll()
    }

    private func takeWake() -> Bool {
        wakeRequested.load(ordering: .relaxed) && wakeRequested.exchange(false, ordering: .acquiringAndReleasing)
    }

    func checkOpen(_ operation: String) throws {
        if isClosed {
            throw KafkaError(code: .state, message: "the consumer is closed", operation: operation)
        }
    }
}
