import Foundation
import HeraldKafka

/// What the scheduler knows about one partition of `herald.scheduled` it owns, and the rules of
/// its life, kept apart from the I/O so that they are tested without servers:
///
/// - **catching up**: assigned, its index cleared, the partition read from its start up to the
///   end it had when assigned; cancel requests read meanwhile wait (`deferCancel`);
/// - **releasing**: read to that end (`reached(position:)` hands back the waiting cancels);
///   due schedules are released, those due within `window` prepared ahead of their time;
/// - **revoked**: dropped by the service (its producer shut down, so the next owner fences
///   any transaction it left open).
struct SchedulerPartition {
    enum Phase: Equatable {
        /// Reading up to this offset before releasing anything.
        case catchingUp(until: Int64)
        case releasing
    }

    private(set) var phase: Phase
    var producer: KafkaProducer?
    /// Cancel requests read while catching up, handled once the partition is read.
    private(set) var deferredCancels: [String] = []
    /// Cancel requests read before the schedule they cancel, by event id, with when they were
    /// read: the API sends one as soon as the planner has written the `scheduled` status, which
    /// it does just before its transaction commits the schedule record.
    var awaitedCancels: [String: ContinuousClock.Instant] = [:]
    /// Releases worked out ahead of their time, by schedule key; dropped when anything about
    /// the schedule changes.
    var prepared: [String: SchedulerService.PreparedRelease] = [:]
    /// When to look for schedules to prepare next (while a scan is not known to be needless).
    private(set) var nextScan = ContinuousClock.now
    /// Every schedule due before this instant (schedule clock) is in `prepared`: the last scan
    /// found them all, and nothing changed the partition since. Until then a round needs no Redis
    /// query, which is what keeps an idle scheduler idle. Nil when not known.
    private(set) var foreseenUntil: Date?

    init(catchingUpTo end: Int64, producer: KafkaProducer? = nil) {
        phase = .catchingUp(until: end)
        self.producer = producer
    }

    var isReleasing: Bool { phase == .releasing }

    /// The consumer's position on the partition is `position`: the cancels that waited for the
    /// partition to be read, once it is (the partition then releases), or nil while it is not.
    mutating func reached(position: Int64) -> [String]? {
        guard case .catchingUp(let end) = phase, end <= 0 || position >= end else { return nil }
        phase = .releasing
        defer { deferredCancels = [] }
        return deferredCancels
    }

    /// A cancel request read while catching up; false when releasing (handle it now).
    mutating func deferCancel(_ key: String) -> Bool {
        guard !isReleasing else { return false }
        deferredCancels.append(key)
        return true
    }

    /// Forgets the awaited cancels read before `instant`; returns their keys.
    mutating func forgetAwaitedCancels(readBefore instant: ContinuousClock.Instant) -> [String] {
        let stale = awaitedCancels.filter { $0.value < instant }.keys.sorted()
        for key in stale { awaitedCancels[key] = nil }
        return stale
    }

    // MARK: The foreseen window

    /// Records were applied or a release committed: what is due must be looked up again.
    mutating func changed() {
        foreseenUntil = nil
    }

    /// Whether a round at `now` has nothing to release without asking Redis.
    func hasNothingDue(at now: Date) -> Bool {
        guard let foreseenUntil, now < foreseenUntil else { return false }
        return !prepared.values.contains { $0.at <= now }
    }

    /// Whether to look for schedules due within `window` of `now`: not while the last look
    /// still covers half the window, nor before `nextScan`, nor with `limit` prepared already.
    func needsScan(now: Date, at instant: ContinuousClock.Instant, window: TimeInterval, limit: Int) -> Bool {
        guard prepared.count < limit, instant >= nextScan else { return false }
        if let foreseenUntil, now < foreseenUntil.addingTimeInterval(-window / 2) { return false }
        return true
    }

    /// A scan up to `horizon` found `found` schedules (at most `limit` were asked for) and
    /// prepared `newlyPrepared` of them, a batch of at most `batch`: a full batch means more
    /// to prepare at once; otherwise, when the scan saw everything, the window is foreseen.
    mutating func scanned(
        horizon: Date, found: Int, limit: Int, newlyPrepared: Int, batch: Int, at instant: ContinuousClock.Instant,
        pause: Duration = .milliseconds(250)
    ) {
        nextScan = instant + pause
        if newlyPrepared == batch {
            nextScan = instant
        } else if found < limit {
            foreseenUntil = horizon
        }
    }

    /// How long a round may wait for records: until the next thing to do, so that a prepared
    /// release leaves on time (10 ms while one is overdue). Up to 100 ms while a partition is
    /// catching up or not foreseen (or none is assigned yet), up to 1 s when every partition is
    /// foreseen; records arriving end the wait at once.
    static func pollTimeout(_ partitions: some Collection<SchedulerPartition>, now: Date, window: TimeInterval) -> Duration {
        var longest = partitions.isEmpty ? 0.1 : 1.0
        for state in partitions {
            guard state.isReleasing, let foreseen = state.foreseenUntil else {
                longest = 0.1
                break
            }
            longest = min(longest, max(0.01, foreseen.timeIntervalSince(now) - window / 2))
        }
        let soonest = partitions.lazy.flatMap { $0.prepared.values.lazy.map(\.at) }.min()
        guard let soonest else { return .milliseconds(Int((longest * 1_000).rounded(.up))) }
        let wait = soonest.timeIntervalSince(now)
        guard wait > 0 else { return .milliseconds(10) }
        return .milliseconds(min(Int(longest * 1_000), Int((wait * 1_000).rounded(.up)) + 1))
    }
}

extension Dictionary where Key == Int32, Value == SchedulerPartition {
    /// Runs `body` on the state of partition `number`, when it is owned, and keeps what it did.
    @discardableResult
    mutating func update<T>(_ number: Int32, _ body: (inout SchedulerPartition) async throws -> T) async rethrows -> T? {
        guard var state = self[number] else { return nil }
        let result = try await body(&state)
        self[number] = state
        return result
    }
}
