import Foundation
import HeraldDomain
import HeraldKafka
import HeraldRedis
import HeraldRegistry

/// The `bits` plan: an expression evaluated on its tags' bitmaps in each slot, 64 positions at
/// a time, then only the packs holding a selected position read (streamed, like a broadcast).
extension TaskExecutor {
    /// Delivers `slots` (planned `bits`). Returns the slots where a tag of the expression had no
    /// bitmap after all (its set fell below half the threshold since the plan was made), which
    /// the caller scans instead.
    func deliverBitmaps(slots: [SlotChoice], matcher: TagMatcher, run: inout TaskRun, producer: KafkaProducer) throws -> Set<Int> {
        let layout = configuration.layout
        let commands = slots.map { choice in
            var keys = [layout.liveKey(slot: choice.slot)]
            for tag in matcher.tags {
                keys.append(layout.bitmapKey(slot: choice.slot, tag: tag))
                keys.append(layout.tagKey(slot: choice.slot, tag: tag))
            }
            return RedisCommand.evalScript(RegistryScripts.bitmaps, keys: keys, arguments: [String]())
        }
        let replies = try redis.pipelineBlocking(commands)
        var unmapped: Set<Int> = []
        var reads: [PackRead] = []
        for (choice, result) in zip(slots, replies) {
            let values = try result.get().array ?? []
            guard values.count == 1 + matcher.tags.count else {
                throw RedisError(code: .unexpectedReply, message: "the bitmaps of slot \(choice.slot) did not come one per tag")
            }
            var tagWords: [[UInt64]] = []
            for value in values.dropFirst() {
                if let bytes = value.bytes {
                    tagWords.append(Self.words(bytes))
                } else if value.int == 0 {
                    tagWords.append([])
                } else {
                    break
                }
            }
            guard tagWords.count == matcher.tags.count else {
                unmapped.insert(choice.slot)
                continue
            }
            let words = matcher.matchingWords(live: Self.words(values[0].bytes ?? []), tagWords: tagWords)
            let packsKey = layout.packsKey(slot: choice.slot)
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
        return unmapped
    }

    /// A Redis bitmap as 64-bit words, position 0 in the high bit of word 0 (missing bytes zero).
    static func words(_ bytes: [UInt8]) -> [UInt64] {
        var words = [UInt64](repeating: 0, count: (bytes.count + 7) / 8)
        for (index, byte) in bytes.enumerated() where byte != 0 {
            words[index >> 3] |= UInt64(byte) << UInt64(56 - 8 * (index & 7))
        }
        return words
    }
}
