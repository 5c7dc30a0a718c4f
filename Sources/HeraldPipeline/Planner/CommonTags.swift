import Synchronization

/// Tags the planner's probe last found on registrations in every slot, remembered for a short
/// while so that the next events on them skip their part of the probe (one `SCARD` per slot
/// and tag: 256 per tag). Breaking news repeats its categories from event to event.
///
/// Taking such a tag as present everywhere can only add candidate slots (`SlotCandidates`
/// treats presence as an over-approximation): a slot it no longer holds costs the fan-out one
/// read that finds nobody there. It never drops a recipient.
final class CommonTags: Sendable {
    /// How long a finding holds.
    static let lifetime: Duration = .seconds(30)
    /// At most this many tags are remembered; the memory is cleared when it is full.
    static let capacity = 1_024

    private let found = Mutex<[String: ContinuousClock.Instant]>([:])

    /// True when `tag` was found in every slot less than `lifetime` before `now`.
    func contains(_ tag: String, now: ContinuousClock.Instant = .now) -> Bool {
        found.withLock { found in
            guard let at = found[tag] else { return false }
            if now - at < Self.lifetime { return true }
            found[tag] = nil
            return false
        }
    }

    /// Remembers the tags of `counts` that have registrations in each of `slotCount` slots.
    func learn(_ counts: SlotTagCounts, slotCount: Int, now: ContinuousClock.Instant = .now) {
        let everywhere = counts.tags.filter { tag in (0..<slotCount).allSatisfy { (counts.count(tag, slot: $0) ?? 0) > 0 } }
        guard !everywhere.isEmpty else { return }
        found.withLock { found in
            if found.count + everywhere.count > Self.capacity { found.removeAll() }
            for tag in everywhere { found[tag] = now }
        }
    }
}
