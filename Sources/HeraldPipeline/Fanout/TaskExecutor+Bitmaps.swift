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
    func deliverBitmaps(slots: [Int], matcher: TagMatcher, run: inout TaskRun, producer: KafkaProducer) throws -> (
        delivered: [Int], unmapped: [Int]
    ) {
        let layout = configuration.layout
        var read = SlotBitmapsRead(layout: layout, slots: slots, tags: matcher.tags)
        let sizes = try read.received(redis.pipelineBlocking(read.commands))
        let slotBitmaps = try read.bitmaps(sizes: sizes.isEmpty ? [] : redis.pipelineBlocking(sizes))
        var delivered: [Int] = []
        var unmapped: [Int] = []
        var reads: [PackRead] = []
        for (slot, bitmaps) in zip(slots, slotBitmaps) {
            guard let bitmaps else {
                unmapped.append(slot)
                continue
            }
            guard !bitmaps.isEmpty else { continue }
            delivered.append(slot)
            let words = bitmaps.matching(matcher)
            let packsKey = layout.packsKey(slot: slot)
            let filter = PackFilter.positions(words: words, matcher: matcher)
            var needed: [Int] = []
            for (index, word) in words.enumerated() where word != 0 {
                // Four packs of 16 positions to a word, the first in its high bits.
                for quarter in 0..<4 where (word >> UInt64(48 - 16 * quarter)) & 0xFFFF != 0 {
                    needed.append(index * 4 + quarter)
                }
            }
            for start in stride(from: 0, to: needed.count, by: packsPerRead) {
                reads.append(hmget(packsKey, packs: needed[start..<min(start + packsPerRead, needed.count)], filter: filter))
            }
        }
        try stream(reads, run: &run, producer: producer)
        return (delivered, unmapped)
    }
}
