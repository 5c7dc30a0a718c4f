import Dispatch

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

extension Duration {
    /// Whole milliseconds, clamped to what librdkafka's `int` timeouts accept.
    var rdKafkaMilliseconds: Int32 {
        let (seconds, attoseconds) = components
        let milliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        return Int32(clamping: max(0, milliseconds))
    }
}
