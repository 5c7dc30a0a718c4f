import Foundation
import HeraldDomain
import HeraldKafka
import HeraldRedis
import HeraldRegistry

/// The `bits` plan: an expression evaluated on its tags' bitmaps in each slot, 64 positions at
/// a time, then only the packs holding a selected position read (streamed, like a broadcast).
/// Slots whose bitmaps select nobody cost one script call and no read.
extension TaskExecutor {
    /// Delivers the audience of `slots` by their bitmaps. Returns the slots delivered this way
    /// (those with registrations) and those where a tag of the expression has registrations but
    /// no bitmap, which need another plan.
    func deliverBitmaps(slots: [Int], matcher: TagMatcher, run: inout TaskRun, producer: KafkaProducer) throws -> (
        delivered: [Int], unmapped: [Int]
    ) {
        let layout = configuration.layout
        let commands = slots.map { SlotBitmaps.command(layout: layout, slot: $0, tags: matcher.tags) }
        let replies = try redis.pipelineBlocking(commands)
        var delivered: [Int] = []
        var unmapped: [Int] = []
        var reads: [PackRead] = []
        for (slot, result) in zip(slots, replies) {
            guard let bitmaps = try SlotBitmaps(reply: result.get(), tagCount: matcher.tags.count, slot: slot) else {
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
