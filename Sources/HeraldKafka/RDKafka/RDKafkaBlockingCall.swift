import Dispatch
import Synchronization

/// The queue a client runs its blocking librdkafka calls on (commits, flushes, admin requests).
///
/// Serial on purpose. On Linux, libdispatch runs concurrent queues on its non-overcommitting
/// root queue: at most one busy thread per CPU, and a thread for blocked work is only added
/// when its monitor notices, about once a second. Measured on a 2-core machine: of four
/// blocks that each block for 1.5 s on four concurrent queues, the third starts after 1.0 s
/// and the fourth after 1.5 s; on four serial queues all four start at once. With every
/// client's commits on concurrent queues, two long `commitTransaction` calls (bulk lanes
/// flushing a big task) would delay every other client's commit by up to a second. A serial
/// queue overcommits: each client gets a thread whenever it has blocking work, and one
/// client's calls run in order, which librdkafka's transactional API requires anyway.
func blockingCallQueue(_ label: String) -> DispatchQueue {
    DispatchQueue(label: label)
}

/// Runs a blocking librdkafka call on `queue` (a Dispatch thread, never a thread of the
/// cooperative pool) and resumes the caller with its result.
func runBlocking<Result: Sendable>(
    on queue: DispatchQueue,
    _ body: @escaping @Sendable () throws -> Result
) async throws -> Result {
    try await withCheckedThrowingContinuation { continuation in
        queue.async {
            continuation.resume(with: Swift.Result { try body() })
        }
    }
}

/// Like `runBlocking(on:_:)`, but the caller is resumed with a fatal `timedOut` error when
/// `body` has not returned `deadline` after it was queued. librdkafka's own timeouts are not
/// enough: some of its calls wait on a condition without one when the broker stops answering
/// (a paused broker held `rd_kafka_send_offsets_to_transaction` for minutes past its 30 s).
/// The thread stays blocked in the call, and so does every later call on the same serial
/// `queue`: the client must be abandoned, which the error's `isFatal` tells the caller.
func runBlocking<Result: Sendable>(
    on queue: DispatchQueue,
    deadline: Duration,
    operation: String,
    onExpiry: @escaping @Sendable () -> Void = {},
    _ body: @escaping @Sendable () throws -> Result
) async throws -> Result {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Result, any Error>) in
        let pending = Mutex<CheckedContinuation<Result, any Error>?>(continuation)
        queue.async {
            let result = Swift.Result { try body() }
            pending.withLock { $0.take() }?.resume(with: result)
        }
        let (seconds, attoseconds) = deadline.components
        let nanoseconds = Int(clamping: seconds) &* 1_000_000_000 &+ Int(attoseconds / 1_000_000_000)
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) {
            guard let waiting = pending.withLock({ $0.take() }) else { return }
            onExpiry()
            waiting.resume(
                throwing: KafkaError(
                    code: .timedOut,
                    message: "no answer within \(deadline) (Herald's deadline over librdkafka's own); the client is abandoned",
                    operation: operation, isFatal: true
                ))
        }
    }
}

/// How much longer than the timeout it passes to librdkafka Herald waits for a blocking call.
let blockingCallGrace: Duration = .seconds(10)

extension Duration {
    /// Whole milliseconds, clamped to what librdkafka's `int` timeouts accept.
    var rdKafkaMilliseconds: Int32 {
        let (seconds, attoseconds) = components
        let milliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        return Int32(clamping: max(0, milliseconds))
    }
}
