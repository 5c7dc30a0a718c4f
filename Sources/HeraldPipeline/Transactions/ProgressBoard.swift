import HeraldDomain
import Foundation
import Synchronization

/// Whether each transactional loop of this process is getting its work done, for health checks.
///
/// A loop is *stalled* while it holds input it has not committed: from the first poll that
/// returned records until a commit (or an empty poll). A broker that stops answering, a Redis
/// that is down, a call stuck in librdkafka all show as a stall that grows, while an idle
/// loop is never stalled. A loop is stalled too while its consumer waits for its group to
/// assign it partitions: a group that does not form leaves every record on its topics
/// unread, however idle the loop looks. `/health/ready` turns false past one limit, `/health/live` past a
/// longer one, so an orchestrator first stops routing to the worker and then restarts it.
public final class ProgressBoard: Sendable {

    /// Why a loop is stalled.
    public enum Reason: Sendable, Hashable, CustomStringConvertible {
        /// It holds input it has not committed.
        case holdingInput
        /// Its consumer waits for the group to assign it partitions.
        case waitingForPartitions

        public var description: String {
            switch self {
            case .holdingInput: "has held uncommitted input"
            case .waitingForPartitions: "has waited for its consumer group to assign partitions"
            }
        }
    }

    /// One loop's clocks. Times are `ContinuousClock` offsets in nanoseconds, 0 when idle.
    final class Entry: Sendable {
        let name: String
        private let busySince = Atomic<Int64>(0)
        /// When the wait for partitions began (may precede `origin`); `Int64.min` while settled.
        private let unassignedSince = Atomic<Int64>(.min)
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

        /// The loop's consumer has waited `wait` for its group to settle (zero: settled).
        func waitingForPartitions(_ wait: Duration, now: ContinuousClock.Instant = .now) {
            guard wait > .zero else {
                unassignedSince.store(.min, ordering: .relaxed)
                return
            }
            unassignedSince.store(nanoseconds(now - wait), ordering: .relaxed)
        }

        /// The longer of the two stalls, with its reason.
        func stall(at now: ContinuousClock.Instant) -> (Duration, Reason) {
            let busy = busySince.load(ordering: .relaxed)
            let unassigned = unassignedSince.load(ordering: .relaxed)
            let held: Duration = busy > 0 ? .nanoseconds(nanoseconds(now) - busy) : .zero
            let waited: Duration = unassigned != .min ? .nanoseconds(nanoseconds(now) - unassigned) : .zero
            return waited > held ? (waited, .waitingForPartitions) : (held, .holdingInput)
        }

        private func nanoseconds(_ instant: ContinuousClock.Instant) -> Int64 {
            (instant - origin).wholeNanoseconds
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

    /// The loops stalled for at least `limit`, with how long and why.
    public func stalled(longerThan limit: Duration, now: ContinuousClock.Instant = .now) -> [(
        name: String, stall: Duration, reason: Reason
    )] {
        entries.withLock { entries in
            entries.values.compactMap { entry in
                let (stall, reason) = entry.stall(at: now)
                return stall >= limit && stall > .zero ? (entry.name, stall, reason) : nil
            }.sorted { $0.name < $1.name }
        }
    }
}
