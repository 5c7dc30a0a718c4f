import Foundation
import HeraldKafka

/// The recovery rules of `TransactionalLoop` as a value: which part of a polled batch to
/// commit next, what to do when a part fails (rewind, dead-letter one record, or split the
/// part to find the record at fault), how long to back off, when to give up creating
/// clients. The loop does the Kafka I/O and asks this value what comes next; the rules are
/// tested here without a broker.
struct TransactionalLoopStateMachine {
    /// Failures in a row (reset by a commit); sets the backoff.
    private(set) var failures = 0
    /// Parts of the current batch still to commit: the whole batch, or one record each while
    /// a permanent failure is being looked for.
    private var parts: [[KafkaMessage]] = []
    /// Records found to fail permanently (by their place in the log), with their dead letters,
    /// until committed.
    private var poisoned: [KafkaTopicPartitionOffset: DeadLetter] = [:]
    /// Past this many, the poisoned records are forgotten (they are found again if re-read).
    let poisonedCeiling: Int
    /// Client creation gives up after this many failures in a row.
    let clientAttempts: Int

    init(poisonedCeiling: Int = 10_000, clientAttempts: Int = 20) {
        self.poisonedCeiling = poisonedCeiling
        self.clientAttempts = clientAttempts
    }

    /// Wait before the next attempt: 200 ms doubling per failure in a row, at most 5 s.
    var backoff: Duration { .milliseconds(min(5_000, 100 * (1 << min(failures, 6)))) }

    enum AfterClientFailure: Equatable {
        case retry(after: Duration)
        /// Too many failures in a row: the loop throws.
        case giveUp
    }

    /// Creating the producer or consumer failed.
    mutating func clientsFailed() -> AfterClientFailure {
        failures += 1
        return failures > clientAttempts ? .giveUp : .retry(after: backoff)
    }

    /// A batch was polled; it is committed part by part.
    mutating func received(_ batch: [KafkaMessage]) {
        parts = batch.isEmpty ? [] : [batch]
    }

    /// Whether every part of the batch is committed (or the batch was given up for a rewind).
    var isBatchDone: Bool { parts.isEmpty }

    struct Part {
        /// Records to handle.
        var work: [KafkaMessage]
        /// Dead letters to write instead of handling their records.
        var deadLetters: [DeadLetter]
        /// Every record of the part, whose offsets the transaction commits.
        var records: [KafkaMessage]
    }

    /// The next part to commit, if any.
    var nextPart: Part? {
        guard let part = parts.first else { return nil }
        return Part(
            work: part.filter { poisoned[$0.nextOffset] == nil },
            deadLetters: part.compactMap { poisoned[$0.nextOffset] },
            records: part)
    }

    /// The next part committed; returns the dead letters it wrote.
    mutating func partCommitted() -> [DeadLetter] {
        guard !parts.isEmpty else { return [] }
        let part = parts.removeFirst()
        failures = 0
        return part.compactMap { poisoned.removeValue(forKey: $0.nextOffset) }
    }

    enum AfterPartFailure: Equatable {
        /// Abandon the batch, back off, and read it again from the committed offsets: by
        /// seeking back when Kafka is not what failed (no rebalance), otherwise with a new
        /// consumer. The infrastructure failed, or there is nowhere to dead-letter.
        case rewind(after: Duration, seek: Bool)
        /// The part is tried again with a record dead-lettered.
        case deadLetter(source: String)
        /// The part is tried again one record per transaction, to find the one at fault.
        case isolate(records: Int)
    }

    /// The next part failed with `error`. Dead-lettering needs a dead-letter topic and a
    /// producer (`canDeadLetter`).
    mutating func partFailed(_ error: any Error, canDeadLetter: Bool, now: Date) -> AfterPartFailure {
        failures += 1
        guard let part = parts.first else { return .rewind(after: backoff, seek: !(error is KafkaError)) }
        if poisoned.count > poisonedCeiling { poisoned.removeAll() }
        let work = part.filter { poisoned[$0.nextOffset] == nil }
        guard case .permanent(let reason) = FailureKind.of(error), canDeadLetter else { return rewind(error) }
        if let failure = error as? PermanentRecordFailure, part.contains(where: { $0.nextOffset == failure.source.nextOffset }) {
            for other in failure.alongside where part.contains(where: { $0.nextOffset == other.source.nextOffset }) {
                _ = poison(other.source, reason: other.reason, message: other.message, now: now)
            }
            return poison(failure.source, reason: failure.reason, message: failure.message, now: now)
        }
        if work.count > 1 {
            parts.removeFirst()
            parts.insert(contentsOf: part.map { [$0] }, at: 0)
            return .isolate(records: part.count)
        }
        if let only = work.first { return poison(only, reason: reason, message: "\(error)", now: now) }
        // Writing only dead letters failed.
        return rewind(error)
    }

    private mutating func rewind(_ error: any Error) -> AfterPartFailure {
        parts.removeAll()
        return .rewind(after: backoff, seek: !(error is KafkaError))
    }

    private mutating func poison(_ record: KafkaMessage, reason: String, message: String, now: Date) -> AfterPartFailure {
        poisoned[record.nextOffset] = DeadLetter(reason: reason, message: message, source: record, now: now)
        return .deadLetter(source: "\(record.topic)/\(record.partition)/\(record.offset)")
    }
}
