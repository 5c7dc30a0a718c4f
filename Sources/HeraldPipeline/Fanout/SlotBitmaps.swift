import HeraldDomain
import HeraldRedis
import HeraldRegistry

/// One slot's bitmaps for an expression: the slot's `live` bitmap and one bitmap per tag of a
/// `TagMatcher`, as 64-bit words (position 0 in the high bit of word 0). The `bits` plan reads
/// them to find the packs holding the audience; the planner reads a few slots' to size a wide
/// event's tasks. `SlotBitmapsRead` reads them.
struct SlotBitmaps {
    var live: [UInt64]
    /// In the order of `TagMatcher.tags`; empty for a tag no registration of the slot has.
    var tags: [[UInt64]]

    /// True when the slot has no registration.
    var isEmpty: Bool { !live.contains { $0 != 0 } }

    /// The positions `matcher` (whose tags these bitmaps follow) selects, 64 to a word.
    func matching(_ matcher: TagMatcher) -> [UInt64] {
        matcher.matchingWords(live: live, tagWords: tags)
    }

    /// One slot's `MGET` reply (`live`, then one bitmap per tag), read in place: its bitmaps (a
    /// missing one empty) and the indices of the tags whose bitmap is missing.
    static func taking(_ reply: RedisReplyReference, tags: Int, slot: Int) throws -> (bitmaps: SlotBitmaps, missing: [Int]) {
        try make(count: reply.count, tags: tags, slot: slot) { reply[$0].bytes.map(words) }
    }

    /// `taking` of a reply of `count` elements, each read by `element` (nil: missing).
    static func make(count: Int, tags: Int, slot: Int, element: (Int) -> [UInt64]?) throws -> (bitmaps: SlotBitmaps, missing: [Int]) {
        guard count == 1 + tags else {
            throw RedisError(code: .unexpectedReply, message: "the bitmaps of slot \(slot) did not come one per tag and live")
        }
        var bitmaps = SlotBitmaps(live: element(0) ?? [], tags: [])
        var missing: [Int] = []
        for tag in 0..<tags {
            if let words = element(1 + tag) {
                bitmaps.tags.append(words)
            } else {
                bitmaps.tags.append([])
                missing.append(tag)
            }
        }
        return (bitmaps, missing)
    }

    /// A Redis bitmap as 64-bit words, position 0 in the high bit of word 0 (missing bytes zero).
    static func words(_ bytes: [UInt8]) -> [UInt64] {
        bytes.withUnsafeBytes { words($0) }
    }

    /// `words(_:)` of a reply's bytes read in place.
    static func words(_ raw: UnsafeRawBufferPointer) -> [UInt64] {
        var words = [UInt64](repeating: 0, count: (raw.count + 7) / 8)
        let whole = raw.count / 8
        for index in 0..<whole {
            words[index] = UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self))
        }
        for index in (whole * 8)..<raw.count {
            words[index >> 3] |= UInt64(raw[index]) << UInt64(56 - 8 * (index & 7))
        }
        return words
    }
}

/// Reads some slots' bitmaps for a matcher's tags in at most two pipelines: one `MGET` per slot
/// of `live` and the tags' bitmaps (one command, so they are read at one instant), then, only
/// for a tag without a bitmap in a slot, the size of its set there. A tag whose set is empty
/// counts as an empty bitmap; a tag on registrations but without a bitmap (its set below
/// `SlotLayout.bitmapThreshold`) leaves the slot to another plan.
///
/// A native `MGET` costs Redis a fraction of a script call reading the same keys, and a
/// narrow event sends one per slot.
struct SlotBitmapsRead {
    let layout: SlotLayout
    let slots: [Int]
    let tags: [String]
    /// By index into `slots`; nil until its reply is taken.
    private var read: [SlotBitmaps?]
    /// (index into `slots`, index into `tags`) of each bitmap that came back missing.
    private var missing: [(slot: Int, tag: Int)] = []

    init(layout: SlotLayout, slots: [Int], tags: [String]) {
        self.layout = layout
        self.slots = slots
        self.tags = tags
        read = Array(repeating: nil, count: slots.count)
    }

    /// The first pipeline: one `MGET` per slot.
    var commands: [RedisCommand] {
        slots.map { slot in .mget([layout.liveKey(slot: slot)] + tags.map { layout.bitmapKey(slot: slot, tag: $0) }) }
    }

    /// Takes the replies of `commands`; returns the second pipeline (`sizeCommands`).
    mutating func received(_ replies: [Result<RedisValue, RedisError>]) throws -> [RedisCommand] {
        for (index, reply) in replies.enumerated() {
            let values = try reply.get().array ?? []
            try take(index, count: values.count) { values[$0].bytes.map(SlotBitmaps.words) }
        }
        return try sizeCommands()
    }

    /// Once every reply is taken: the second pipeline, one `SCARD` per missing bitmap (empty
    /// when none is missing).
    mutating func sizeCommands() throws -> [RedisCommand] {
        guard let unread = read.firstIndex(where: { $0 == nil }) else {
            // An empty slot needs no sizes: nothing is delivered there.
            missing.removeAll { read[$0.slot]?.isEmpty ?? true }
            return missing.map { .scard(layout.tagKey(slot: slots[$0.slot], tag: tags[$0.tag])) }
        }
        throw RedisError(code: .unexpectedReply, message: "the bitmaps of slot \(slots[unread]) were not read")
    }

    private mutating func take(_ index: Int, count: Int, element: (Int) -> [UInt64]?) throws {
        let (bitmaps, missing) = try SlotBitmaps.make(count: count, tags: tags.count, slot: slots[index], element: element)
        self.missing += missing.map { (index, $0) }
        read[index] = bitmaps
    }

    /// Each slot's bitmaps, in the order of `slots`, given the replies of the second pipeline;
    /// nil for a slot where a tag has registrations but no bitmap.
    func bitmaps(sizes: [Result<RedisValue, RedisError>]) throws -> [SlotBitmaps?] {
        guard sizes.count == missing.count else {
            throw RedisError(code: .unexpectedReply, message: "\(sizes.count) set sizes for \(missing.count) missing bitmaps")
        }
        var result = read
        for (entry, size) in zip(missing, sizes) where try (size.get().int ?? 0) > 0 {
            result[entry.slot] = nil
        }
        return result
    }
}
