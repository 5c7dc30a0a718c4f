import HeraldRedis
import HeraldRegistry

/// The sizes an expression's plans are chosen by, for a run of slots: each slot's
/// registrations (`SCARD all`) and the size of each of a few tags' sets there, asked in one
/// pipeline. The planner sizes a wide event's tasks with them; a fan-out task chooses each
/// slot's plan.
struct SlotTagSizes {
    let tags: [String]
    private let counts: [Int]

    /// The commands, slot by slot: `all`, then each tag.
    static func commands(layout: SlotLayout, slots: some Sequence<Int>, tags: [String]) -> [RedisCommand] {
        var commands: [RedisCommand] = []
        for slot in slots {
            commands.append(.scard(layout.allKey(slot: slot)))
            for tag in tags { commands.append(.scard(layout.tagKey(slot: slot, tag: tag))) }
        }
        return commands
    }

    /// The replies of `commands`, in order.
    init(tags: [String], counts: [Int]) {
        self.tags = tags
        self.counts = counts
    }

    /// Registrations of the slot at `position` in the asked run.
    func registrations(at position: Int) -> Int {
        counts[position * (1 + tags.count)]
    }

    /// The size of `tag`'s set in the slot at `position`; a tag that was not asked counts as
    /// every registration.
    func count(_ tag: String, at position: Int) -> Int {
        guard let index = tags.firstIndex(of: tag) else { return registrations(at: position) }
        return counts[position * (1 + tags.count) + 1 + index]
    }
}

/// The planner's probe (`EventPlanner.probeCommands`): the size of each of a few tags' sets in
/// every slot, which says where an audience may be and helps size it.
struct SlotTagCounts {
    let tags: [String]
    private let counts: [Int]

    /// The probe's replies, slot by slot, one per tag.
    init(tags: [String], replies: ArraySlice<Result<RedisValue, RedisError>>) throws {
        self.tags = tags
        counts = try replies.map { try $0.get().int ?? 0 }
    }

    func has(_ tag: String) -> Bool { tags.contains(tag) }

    /// The size of `tag`'s set in `slot`; nil for a tag the probe did not ask.
    func count(_ tag: String, slot: Int) -> Int? {
        guard let index = tags.firstIndex(of: tag) else { return nil }
        let at = slot * tags.count + index
        return at < counts.count ? counts[at] : nil
    }
}
