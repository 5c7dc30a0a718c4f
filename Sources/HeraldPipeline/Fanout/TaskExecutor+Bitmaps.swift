import Foundation
import HeraldDomain
import HeraldKafka
import HeraldRedis
import HeraldRegistry

/// The `bits` plan: an expression evaluated on its tags' bitmaps in each slot, 64 positions at
/// a time, then only the packs holding a selected position read (streamed, like a broadcast).
/// Slots whose bitmaps select nobody cost one `MGET` and no read.
extension TaskExecutor {
    /// What one command of a `bits` stream reads.
    private enum BitmapStreamItem {
        /// The `MGET` of `live` and the tags' bitmaps of `slots[index]`.
        case bitmaps(index: Int)
        /// The `SCARD` of tag `tag` in `slots[index]`, whose bitmap came back missing.
        case size(index: Int, tag: Int)
        case packs(PackRead)
    }

    /// Slots whose `MGET` goes out ahead of the slot whose bitmaps are being read, once the
    /// stream is under way (it starts with 2 and doubles).
    static let bitmapLookahead = 32

    /// Delivers the audience of `slots` by their bitmaps. Returns the slots delivered this way
    /// (those with registrations) and those where a tag of the expression has registrations but
    /// no bitmap, which need another plan.
    ///
    /// One stream on the pack connection (`RedisConnection.streamRepliesBlocking` with a tail)
    /// carries it all: the `MGET`s of the first two slots, and behind each slot's bitmaps, once
    /// they are read, the `HMGET`s of its packs holding the audience and more `MGET`s, up to
    /// twice as many slots ahead as bitmaps were read, at most `bitmapLookahead`. A tag whose
    /// bitmap is missing is sized (`SCARD`) in the same stream: on no registration it reads as
    /// an empty bitmap, on some it leaves the slot to another plan. So the first records are
    /// written after two round trips and two slots' bitmaps (a slot of ten million devices'
    /// bitmaps are about 20 KB), the bitmaps stay ahead of the packs, and Redis always has the
    /// next reads queued (on a cluster the added commands go out a list at a time,
    /// `RedisStreamTail`).
    func deliverBitmaps(slots: [Int], matcher: TagMatcher, run: inout TaskRun, producer: KafkaProducer) throws -> (
        delivered: [Int], unmapped: [Int]
    ) {
        guard !slots.isEmpty else { return ([], []) }
        let tags = matcher.tags
        func bitmapsCommand(_ index: Int) -> RedisCommand {
            .mget([layout.liveKey(slot: slots[index])] + tags.map { layout.bitmapKey(slot: slots[index], tag: $0) })
        }
        // An `MGET` of bitmaps costs the budget about one pack: a few bytes per position.
        let bitmapsCost = SlotLayout.positionsPerPack
        let first = min(slots.count, 2)
        var nextBitmaps = first
        var items: [BitmapStreamItem] = (0..<first).map { .bitmaps(index: $0) }
        // Slots whose missing bitmaps are being sized: their bitmaps and the sizes still owed.
        var sizing: [Int: (bitmaps: SlotBitmaps, owed: Int)] = [:]
        var delivered: [Int] = []
        var unmapped: [Int] = []

        func deliver(_ index: Int, _ bitmaps: SlotBitmaps, into tail: inout RedisStreamTail) {
            delivered.append(slots[index])
            for read in packReads(slot: slots[index], bitmaps: bitmaps, matcher: matcher) {
                tail.append(read.command, cost: read.registrations)
                items.append(.packs(read))
            }
        }
        try packReader.streamRepliesBlocking(
            (0..<first).map(bitmapsCommand), costs: Array(repeating: bitmapsCost, count: first), budget: 2 * configuration.snapshotReadLimit
        ) { position, reply, tail in
            switch items[position] {
            case .packs(let read):
                try write(read, reply: reply, run: &run, producer: producer)
            case .bitmaps(let index):
                if reply.isError, let error = packReader.error(in: reply, of: bitmapsCommand(index)) { throw error }
                let (bitmaps, missing) = try SlotBitmaps.taking(reply, tags: tags.count, slot: slots[index])
                let ahead = min(slots.count - 1, index + min(Self.bitmapLookahead, 2 * (index + 1)))
                while nextBitmaps <= ahead {
                    tail.append(bitmapsCommand(nextBitmaps), cost: bitmapsCost)
                    items.append(.bitmaps(index: nextBitmaps))
                    nextBitmaps += 1
                }
                // An empty slot needs no sizes: nothing is delivered there.
                guard !bitmaps.isEmpty else { return }
                guard !missing.isEmpty else { return deliver(index, bitmaps, into: &tail) }
                sizing[index] = (bitmaps, missing.count)
                for tag in missing {
                    tail.append(.scard(layout.tagKey(slot: slots[index], tag: tags[tag])), cost: 1)
                    items.append(.size(index: index, tag: tag))
                }
            case .size(let index, let tag):
                if reply.isError, let error = packReader.error(in: reply, of: .scard(layout.tagKey(slot: slots[index], tag: tags[tag]))) {
                    throw error
                }
                guard var entry = sizing[index] else { return }
                if (reply.integer ?? 0) > 0 {
                    sizing[index] = nil
                    unmapped.append(slots[index])
                    return
                }
                entry.owed -= 1
                sizing[index] = entry.owed > 0 ? entry : nil
                if entry.owed == 0 { deliver(index, entry.bitmaps, into: &tail) }
            }
        }
        return (delivered, unmapped)
    }

    /// The `HMGET`s of the packs of `slot` holding a position `bitmaps` select.
    private func packReads(slot: Int, bitmaps: SlotBitmaps, matcher: TagMatcher) -> [PackRead] {
        let words = bitmaps.matching(matcher)
        let filter = PackFilter.positions(words: words, matcher: matcher)
        var needed: [Int] = []
        for (index, word) in words.enumerated() where word != 0 {
            // Four packs of 16 positions to a word, the first in its high bits.
            for quarter in 0..<4 where (word >> UInt64(48 - 16 * quarter)) & 0xFFFF != 0 {
                needed.append(index * 4 + quarter)
            }
        }
        return stride(from: 0, to: needed.count, by: packsPerRead).map { start in
            hmget(slot: slot, packs: needed[start..<min(start + packsPerRead, needed.count)], filter: filter)
        }
    }
}
