import Foundation
import Synchronization

/// Whether each transactional loop of this process is getting its work done, for health checks.
///
/// A loop is *stalled* while it holds input it has not committed: from the first poll that
/// returned records until a commit (or an empty poll). A broker that stops answering, a Redis
/// that is down, a call stuck in librdkafka all show as a stall that grows, while an idle
/// loop is never stalled. `/health/ready` turns false past one limit, `/health/live` past a
/// longer one, so an orchestrator first stops routing to the worker and then restarts it.
public final class ProgressBoard: Sendable {
    public static let shared = ProgressBoard()

    /// One loop's clock. Times are `ContinuousClock` offsets in nanoseconds, 0 when idle.
    final class Entry: Sendable {
        let name: String
        private let busySince = Atomic<Int64>(0)
        private let origin: ContinuousClock.Instant

        init(name: String, origin: ContinuousClock.Instant) {
            self.name = name
            self.origin = origin
        }

        /// Holding records: starts the stall clock unless it already runs.
        func holding() {
            _ = busySince.compareExchange(expected: 0, desired: max(1, nanoseconds(.now)), ordering: .relaxed)
        }

        /// Committed or idle: nothing is waiting.
        func caughtUp() { busySince.store(0, ordering: .relaxed) }

        func stall(at now: ContinuousClock.Instant) -> Duration {
            let since = busySince.load(ordering: .relaxed)
            guard since > 0 else { return .zero }
            return .nanoseconds(nanoseconds(now) - since)
        }

        private func nanoseconds(_ instant: ContinuousClock.Instant) -> Int64 {
            let (seconds, attoseconds) = (instant - origin).components
            return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
        }
    }

    private let origin = ContinuousClock.now
    private let entries = Mutex<[ObjectIdentifier: Entry]>([:])

    public init() {}

    func register(_ name: String) -> Entry {
        let entry = Entry(name: name, origin: origin)
        entries.withLock { $0[ObjectIdentifier(entry)] = entry }
        return entry
    }

    func unregister(_ entry: Entry) {
        _ = entries.withLock { $0.removeValue(forKey: ObjectIdentifier(entry)) }
    }

    /// The loops that have held uncommitted input for at least `limit`, with how long.
    public func stalled(longerThan limit: Duration, now: ContinuousClock.Instant = .now) -> [(name: String, stall: Duration)] {
        entries.withLock { entries in
            entries.values.compactMap { entry in
                let stall = entry.stall(at: now)
                return stall >= limit && stall > .zero ? (entry.name, stall) : nil
            }.sorted { $0.name < $1.name }
        }
    }
}
