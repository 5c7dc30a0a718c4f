import Foundation
import HeraldDomain
import HeraldKafka
import HeraldRedis
import HeraldRegistry

/// The `bits` plan: an expression evaluated on its tags' bitmaps in each slot, 64 positions at
/// a time, then only the packs holding a selected position read (streamed, like a broadcast).
/// Slots whose bitmaps select nobody cost one `MGET` and no read.
extension TaskExecutor {
    /// Delivers the audience of `slots` by their bitmaps. Returns the slots delivered this way
    /// (those with registrations) and those where a tag of the expression has registrations but
    /// no bitmap, which need another plan.
    ///
    /// The slots go in runs of 1, 2, 4, ... (`bitmapRuns`): the first run's bitmaps are read on
    /// their own, and each next run's `MGET`s ride at the end of the stream of the run before,
    /// so the first records are written after one slot's bitmaps instead of all of them, and
    /// the later bitmaps arrive while records are written.
    func deliverBitmaps(slots: [Int], matcher: TagMatcher, run: inout TaskRun, producer: KafkaProducer) throws -> (
        delivered: [Int], unmapped: [Int]
    ) {
        let layout = configuration.layout
        let runs = Self.bitmapRuns(slots.count)
        guard let first = runs.first else { return ([], []) }
        var read = SlotBitmapsRead(layout: layout, slots: Array(slots[first]), tags: matcher.tags)
        var sizes = try read.received(redis.pipelineBlocking(read.commands))
        var delivered: [Int] = []
        var unmapped: [Int] = []
        for number in runs.indices {
            let slotBitmaps = try read.bitmaps(sizes: sizes.isEmpty ? [] : redis.pipelineBlocking(sizes))
            var reads: [PackRead] = []
            for (slot, bitmaps) in zip(read.slots, slotBitmaps) {
                guard let bitmaps else {
                    unmapped.append(slot)
                    continue
                }
                guard !bitmaps.isEmpty else { continue }
                delivered.append(slot)
                reads += packReads(slot: slot, bitmaps: bitmaps, matcher: matcher)
            }
            var next =
                number + 1 < runs.count
                ? SlotBitmapsRead(layout: layout, slots: Array(slots[runs[number + 1]]), tags: matcher.tags) : nil
            try stream(reads, then: &next, run: &run, producer: producer)
            if let next {
                read = next
                sizes = try read.sizeCommands()
            }
        }
        return (delivered, unmapped)
    }

    /// The `HMGET`s of the packs of `slot` holding a position `bitmaps` select.
    private func packReads(slot: Int, bitmaps: SlotBitmaps, matcher: TagMatcher) -> [PackRead] {
        let words = bitmaps.matching(matcher)
        let packsKey = configuration.layout.packsKey(slot: slot)
        let filter = PackFilter.positions(words: words, matcher: matcher)
        var needed: [Int] = []
        for (index, word) in words.enumerated() where word != 0 {
            // Four packs of 16 positions to a word, the first in its high bits.
            for quarter in 0..<4 where (word >> UInt64(48 - 16 * quarter)) & 0xFFFF != 0 {
                needed.append(index * 4 + quarter)
            }
        }
        return stride(from: 0, to: needed.count, by: packsPerRead).map { start in
            hmget(packsKey, packs: needed[start..<min(start + packsPerRead, needed.count)], filter: filter)
        }
    }

    /// Index ranges of `count` slots in runs doubling from one: 1, 2, 4, ... (the last run
    /// takes what is left).
    static func bitmapRuns(_ count: Int) -> [Range<Int>] {
        var runs: [Range<Int>] = []
        var start = 0
        var length = 1
        while start < count {
            let end = min(count, start + length)
            runs.append(start..<end)
            start = end
            length *= 2
        }
        return runs
    }
}
