import Synchronization

/// The result of `operation`, or nil when it has not finished within `limit`. The operation is
/// not cancelled: a blocking Redis call cannot be, so it runs on to its own end in the
/// background. For checks that must answer in time whatever Redis does (`/health/ready` during
/// a failover, when commands wait out the cluster's retry budget).
public func answer<T: Sendable>(within limit: Duration, _ operation: @escaping @Sendable () async -> T?) async -> T? {
    let once = ResumeOnce<T?>()
    return await withCheckedContinuation { continuation in
        once.arm(continuation)
        Task { once.resume(returning: await operation()) }
        Task {
            try? await Task.sleep(for: limit)
            once.resume(returning: nil)
        }
    }
}

/// A continuation resumed by whichever of several tasks comes first.
private final class ResumeOnce<T: Sendable>: Sendable {
    private let continuation = Mutex<CheckedContinuation<T, Never>?>(nil)

    func arm(_ continuation: CheckedContinuation<T, Never>) {
        self.continuation.withLock { $0 = continuation }
    }

    func resume(returning value: T) {
        continuation.withLock { $0.take() }?.resume(returning: value)
    }
}
