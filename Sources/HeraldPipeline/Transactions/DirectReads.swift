import HeraldKafka
import Logging
import Synchronization

/// Partitions of the task topic that a planner of this process has just written committed
/// tasks to. A bulk lane that owns one of them and has nothing to do reads it at once
/// (`DirectReads`) instead of waiting for its group consumer's next fetch.
///
/// A notice is only a hint: a lane that takes it reads the partition's next committed record
/// from the group's committed offset, which is the record its group consumer would hand it
/// next. A stale or foreign notice costs one read that finds nothing new.
public final class TaskNotices: Sendable {
    private let pending = Mutex<Set<KafkaTopicPartition>>([])
    private let listeners = Mutex<(next: Int, wake: [Int: @Sendable () -> Void])>((0, [:]))

    /// Called once the planner's transaction that wrote to `partitions` has committed; wakes
    /// every listener, so idle lanes look at once instead of polling for notices.
    func post(_ partitions: some Sequence<KafkaTopicPartition>) {
        pending.withLock { $0.formUnion(partitions) }
        for wake in listeners.withLock({ Array($0.wake.values) }) { wake() }
    }

    /// Calls `wake` after every `post` until the returned token is passed to `stopListening`.
    func listen(_ wake: @escaping @Sendable () -> Void) -> Int {
        listeners.withLock { listeners in
            listeners.next += 1
            listeners.wake[listeners.next] = wake
            return listeners.next
        }
    }

    func stopListening(_ token: Int) {
        _ = listeners.withLock { $0.wake.removeValue(forKey: token) }
    }

    /// Removes and returns the noticed partitions among `owned`.
    func take(among owned: [KafkaTopicPartition]) -> [KafkaTopicPartition] {
        pending.withLock { pending in
            guard !pending.isEmpty else { return [] }
            let taken = owned.filter { pending.contains($0) }
            pending.subtract(taken)
            return taken
        }
    }

    var isEmpty: Bool { pending.withLock { $0.isEmpty } }

    public init() {}
}

/// A loop's reads of noticed partitions beside its group consumer, and the offsets it has
/// committed, below which its group consumer's records were already handled.
///
/// On a broker that answers a waiting fetch only when the wait ends (the embedded one), an
/// idle bulk lane learns of its first task up to tens of milliseconds after the planner
/// committed it. The lane's group consumer cannot be hurried: its fetch is in flight. So the
/// lane reads the noticed partitions with a consumer of its own (no group, a short fetch wait),
/// from the group's committed offset, and handles the first record in the usual transaction,
/// with the usual offsets and group metadata. Its group consumer fetches that record later;
/// the loop drops it, since the offset is below what this loop has committed.
final class DirectReads {
    struct Settings: Sendable {
        var notices: TaskNotices
        /// Of the reading consumer (no group; `read_committed`).
        var consumer: KafkaConsumerConfiguration
        /// The longest a read waits for a noticed partition's record. The record is committed
        /// before the notice, so it comes in one fetch (1-5 ms on the embedded broker). A read
        /// that finds nothing (the group consumer brought the record first) waits this long, the
        /// lane idle. It does not stop at a partition's reported end: that end can lag the
        /// commit (Apache Kafka writes transaction markers after the commit returns).
        var readTimeout: Duration = .milliseconds(15)
    }

    let settings: Settings
    private let logger: Logger
    private var reader: KafkaConsumer?
    /// Per partition, the offset after the last record this loop committed.
    private var committed: [KafkaTopicPartition: Int64] = [:]

    init(settings: Settings, logger: Logger) {
        self.settings = settings
        self.logger = logger
    }

    /// The reading consumer, created on first use (the loop creates it at start, so its
    /// connection is made before the first notice).
    @discardableResult
    func prepare() throws -> KafkaConsumer {
        if let reader { return reader }
        let created = try KafkaConsumer(configuration: settings.consumer, logger: logger)
        reader = created
        return created
    }

    /// Notes the offsets of a committed transaction's records.
    func committed(_ records: [KafkaMessage]) {
        for record in records {
            committed[record.topicPartition] = max(committed[record.topicPartition] ?? 0, record.offset + 1)
        }
    }

    /// `batch` without the records this loop has already handled and committed.
    func unhandled(_ batch: [KafkaMessage]) -> [KafkaMessage] {
        guard !committed.isEmpty else { return batch }
        return batch.filter { $0.offset >= committed[$0.topicPartition] ?? 0 }
    }

    /// The next committed record of a noticed partition that `group` owns, or nil when none
    /// is noticed or none arrives within `readTimeout`.
    func next(owner group: KafkaConsumer) async throws -> KafkaMessage? {
        guard !settings.notices.isEmpty else { return nil }
        let noticed = settings.notices.take(among: try group.assignment())
        guard !noticed.isEmpty else { return nil }
        let starts = try await startOffsets(noticed, group: group)
        let reader = try prepare()
        try reader.assign(starts)
        defer { try? reader.assign([]) }
        let first = Dictionary(uniqueKeysWithValues: starts.map { ($0.topicPartition, $0.offset) })
        let deadline = ContinuousClock.now + settings.readTimeout
        var remaining = settings.readTimeout
        while remaining > .zero {
            // A record of an earlier assignment may still be queued: only the asked ones count.
            for record in try await reader.pollBatch(maxMessages: 1, timeout: remaining) {
                if let start = first[record.topicPartition], record.offset >= start { return record }
            }
            remaining = ContinuousClock.now.duration(to: deadline)
        }
        logger.debug(
            "direct read found nothing",
            metadata: ["from": "\(starts.map { "\($0.topic)/\($0.partition)@\($0.offset)" }.joined(separator: ","))"])
        return nil
    }

    /// Where `group` reads each of `partitions` next. This loop only asks when it has handled
    /// everything it polled, so that is the group's committed offset. Where this loop has
    /// committed records of a partition, the offset after the last of them is it, or the group
    /// consumer's position where that is further: every record that consumer returned was
    /// handled and committed (an aborted transaction rewinds it), so what lies between is the
    /// transaction markers it has read past (each writer's commit leaves one behind its
    /// records). Where it has no position yet (a new assignment, which may follow another
    /// member's commits) or this loop has committed nothing of the partition, the group is
    /// asked: that round trip waits while another lane's transaction holds offsets of the
    /// group on the embedded broker, which is why it is the exception.
    private func startOffsets(_ partitions: [KafkaTopicPartition], group: KafkaConsumer) async throws -> [KafkaTopicPartitionOffset] {
        var starts: [KafkaTopicPartitionOffset] = []
        var unknown: [KafkaTopicPartition] = []
        for position in try group.position(partitions) {
            if let mine = committed[position.topicPartition], position.offset >= 0 {
                starts.append(
                    KafkaTopicPartitionOffset(topic: position.topic, partition: position.partition, offset: max(mine, position.offset)))
            } else {
                unknown.append(position.topicPartition)
            }
        }
        guard !unknown.isEmpty else { return starts }
        return try await starts
            + group.committed(unknown).map { entry in
                let mine = committed[entry.topicPartition] ?? KafkaTopicPartitionOffset.beginning
                return KafkaTopicPartitionOffset(topic: entry.topic, partition: entry.partition, offset: max(entry.offset, mine))
            }
    }

    func close() async {
        try? await reader?.close()
        reader = nil
    }
}
