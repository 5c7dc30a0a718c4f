import Synchronization

/// How long a group member has been waiting for the group to settle: from `subscribe` and
/// from every revocation or loss until the group assigns it partitions (an empty assignment
/// counts: a member of a group with more members than partitions is settled, not waiting).
///
/// A member of a healthy group waits a few seconds per rebalance. One that waits for minutes
/// is in a group that does not form, and it cannot take any of the work waiting on its topics.
public final class GroupMembershipClock: Sendable {
    private let origin: ContinuousClock.Instant
    /// Nanoseconds after `origin` (at least 1) since the wait began; 0 while settled.
    private let waitingSince = Atomic<Int64>(0)

    public init(origin: ContinuousClock.Instant = .now) { self.origin = origin }

    /// The member asked to join: the wait (re)starts.
    public func joining(at now: ContinuousClock.Instant = .now) {
        waitingSince.store(offset(now), ordering: .relaxed)
    }

    /// A rebalance event: an assignment ends the wait, a revocation or loss starts one.
    public func rebalanced(_ event: KafkaRebalanceEvent, at now: ContinuousClock.Instant = .now) {
        switch event {
        case .assigned:
            waitingSince.store(0, ordering: .relaxed)
        case .revoked, .lost:
            _ = waitingSince.compareExchange(expected: 0, desired: offset(now), ordering: .relaxed)
        }
    }

    /// The member left or closed: nothing is waited for any more.
    public func left() { waitingSince.store(0, ordering: .relaxed) }

    /// How long the current wait has lasted; zero while settled.
    public func waiting(at now: ContinuousClock.Instant = .now) -> Duration {
        let since = waitingSince.load(ordering: .relaxed)
        guard since > 0 else { return .zero }
        return .nanoseconds(max(0, offset(now) - since))
    }

    private func offset(_ instant: ContinuousClock.Instant) -> Int64 {
        let (seconds, attoseconds) = (instant - origin).components
        return max(1, seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
