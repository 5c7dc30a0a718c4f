import Synchronization

/// One-at-a-time passage for the part of a transaction that writes partitions other
/// transactions of this process also write (the status topic: every lane of a broadcast
/// writes its progress under the event's key), through to the commit.
///
/// Why: a broker resolves overlapping transactions on one partition by each one's last stable
/// offset; Apache Kafka hides only what follows the oldest open transaction's first offset,
/// but Tansu 0.6 leaves a committed transaction invisible while any transaction that wrote
/// the same partition before it is still open, and the producer's next transaction inherits
/// it (`bench/probes/tansu-entangled-transactions.py`). Two lanes whose commits keep overlapping on
/// the status partition of a broadcast then hide each other's deliveries, and the planner's,
/// until the broadcast ends. Passing the shared writes and the commit through this gate
/// keeps them from overlapping inside a worker; on Apache Kafka it is a few milliseconds of
/// waiting at most, as the gated part is short (the status records and the commit; bulk
/// lanes flush their deliveries before they queue for it).
///
/// FIFO, not reentrant; waiters are resumed in arrival order.
public final class TransactionGate: Sendable {
    /// The gate every role of this process shares.

    private struct State {
        var held = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    public init() {}

    /// Tasks waiting to pass (for tests and diagnostics).
    var waiting: Int { state.withLock { $0.waiters.count } }

    /// Runs `body` while holding the gate.
    public func pass<T: Sendable>(_ body: () async throws -> T) async rethrows -> T {
        await enter()
        defer { leave() }
        return try await body()
    }

    private func enter() async {
        let entered = state.withLock { state -> Bool in
            guard state.held else {
                state.held = true
                return true
            }
            return false
        }
        guard !entered else { return }
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLock { state -> Bool in
                // It may have been released between the two locks.
                guard state.held else {
                    state.held = true
                    return true
                }
                state.waiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    private func leave() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiters.isEmpty else {
                state.held = false
                return nil
            }
            // The gate passes straight to the next waiter (it stays held).
            return state.waiters.removeFirst()
        }
        next?.resume()
    }
}
