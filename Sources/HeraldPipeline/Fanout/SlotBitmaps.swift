import HeraldDomain
import HeraldRedis
import HeraldRegistry

/// One slot's bitmaps for an expression, as `RegistryScripts.bitmaps` returns them: the
/// slot's `live` bitmap and one bitmap per tag of a `TagMatcher`, as 64-bit words (position 0
/// in the high bit of word 0). The `bits` plan reads them to find the packs holding the
/// audience; the planner reads a few slots' to size a wide event's tasks.
struct SlotBitmaps {
    var live: [UInt64]
    /// In the order of `TagMatcher.tags`; empty for a tag no registration of the slot has.
    var tags: [[UInt64]]

    /// The script's command for `slot`: `live`, then each tag's bitmap and set.
    static func command(layout: SlotLayout, slot: Int, tags: [String]) -> RedisCommand {
        var keys = [layout.liveKey(slot: slot)]
        for tag in tags {
            keys.append(layout.bitmapKey(slot: slot, tag: tag))
            keys.append(layout.tagKey(slot: slot, tag: tag))
        }
        return RedisCommand.evalScript(RegistryScripts.bitmaps, keys: keys, arguments: [String]())
    }

    /// Reads the reply for `slot`. Nil when a tag has members there but no bitmap (its set
    /// fell below half `SlotLayout.bitmapThreshold`, or never reached it): the slot needs
    /// another plan.
    init?(reply: RedisValue, tagCount: Int, slot: Int) throws {
        let values = reply.array ?? []
        var tags: [[UInt64]] = []
        for value in values.dropFirst() {
            if let bytes = value.bytes {
                tags.append(Self.words(bytes))
            } else if value.int == 0 {
                tags.append([])
            } else {
                return nil
            }
        }
        guard !values.isEmpty, tags.count == tagCount else {
            throw RedisError(code: .unexpectedReply, message: "the bitmaps of slot \(slot) did not come one per tag")
        }
        self.live = Self.words(values[0].bytes ?? [])
        self.tags = tags
    }

    /// True when the slot has no registration.
    var isEmpty: Bool { !live.contains { $0 != 0 } }

    /// The positions `matcher` (whose tags these bitmaps follow) selects, 64 to a word.
    func matching(_ matcher: TagMatcher) -> [UInt64] {
        matcher.matchingWords(live: live, tagWords: tags)
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
