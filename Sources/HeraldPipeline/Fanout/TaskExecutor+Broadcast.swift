import Foundation
import HeraldDomain
import HeraldKafka
import HeraldRedis
import HeraldRegistry
import Logging

/// What a streamed pack read delivers of the registrations in its packs.
enum PackFilter {
    /// Those whose view's tags the expression selects (`scan`).
    case tags(TagMatcher)
    /// Those whose position is set in `words` (bit 63 of word 0 is position 0, as in a Redis
    /// bitmap) and whose view's tags the expression selects (`bits`). The second test costs
    /// little, as it runs for the audience only, and keeps a position taken by another
    /// registration since the bitmaps were read from being delivered on the old one's tags.
    case positions(words: [UInt64], matcher: TagMatcher)
}

/// A broadcast, or the scan plan of an expression: every registration of the given slots,
/// streamed from the slots' view packs (and, for a scan, tested against the expression).
extension TaskExecutor {
    /// One read of a stream of pack reads: `HGETALL` of a whole slot's packs, or `HMGET` of some.
    struct PackRead {
        var command: RedisCommand
        var key: String
        /// The slot whose packs it reads.
        var slot: Int
        var isWholeSlot: Bool
        var filter: PackFilter?
        /// The most registrations its reply can hold (16 per pack asked; a whole slot's size).
        var registrations: Int
    }

    /// Packs per `HMGET` so one reply holds at most about `snapshotReadLimit` registrations.
    var packsPerRead: Int { max(1, configuration.snapshotReadLimit / SlotLayout.positionsPerPack) }

    /// Every registration of `slots` (each with its size, `SCARD all`; `all` and the packs
    /// always hold the same ids) that `filter` selects (all of them without one), from the
    /// slots' view packs, which hold ids and views together.
    ///
    /// A slot of at most `snapshotReadLimit` registrations is then read with one
    /// `HGETALL`, a consistent snapshot; a bigger one in runs of packs with `HMGET`, so memory
    /// stays bounded whatever the slot size (a registration keeps its position, so its pack,
    /// as long as it is in the slot: each one is read once even while the slot changes).
    func deliverEverything(slots: [(slot: Int, registrations: Int)], filter: PackFilter?, run: inout TaskRun, producer: KafkaProducer)
        throws
    {
        var reads: [PackRead] = []
        let big = slots.filter { $0.registrations > configuration.snapshotReadLimit }.map(\.slot)
        let packCounts = try packCounts(big)
        for (slot, registrations) in slots where registrations > 0 {
            let packsKey = layout.packsKey(slot: slot)
            if registrations <= configuration.snapshotReadLimit {
                reads.append(
                    PackRead(
                        command: .hgetall(packsKey), key: packsKey, slot: slot, isWholeSlot: true, filter: filter,
                        registrations: registrations))
                continue
            }
            let packs = packCounts[slot] ?? 0
            for start in stride(from: 0, to: packs, by: packsPerRead) {
                reads.append(hmget(slot: slot, packs: start..<min(start + packsPerRead, packs), filter: filter))
            }
        }
        try stream(reads, run: &run, producer: producer)
    }

    /// `HMGET` of `packs` of the packs hash of `slot`.
    func hmget(slot: Int, packs: some Sequence<Int>, filter: PackFilter?) -> PackRead {
        let packsKey = layout.packsKey(slot: slot)
        var command = RedisCommand("HMGET", isReadOnly: true)
        command.append(packsKey)
        var count = 0
        for index in packs {
            command.append(SlotLayout.packField(index))
            count += 1
        }
        return PackRead(
            command: command, key: packsKey, slot: slot, isWholeSlot: false, filter: filter,
            registrations: count * SlotLayout.positionsPerPack)
    }

    /// Runs `reads` streamed (`RedisConnection.streamRepliesBlocking`): Redis prepares the next
    /// replies while this lane writes the records of the current one, so the lane does not
    /// stand still waiting for Redis at every read while the producer's next batch waits to be
    /// filled. Replies for up to twice `snapshotReadLimit` registrations are outstanding (at
    /// least two replies): a narrow audience's reads of a few packs each go out together
    /// instead of a round trip each.
    func stream(_ reads: [PackRead], run: inout TaskRun, producer: KafkaProducer) throws {
        try packReader.streamRepliesBlocking(
            reads.map(\.command), costs: reads.map(\.registrations), budget: 2 * configuration.snapshotReadLimit
        ) { index, reply in
            try write(reads[index], reply: reply, run: &run, producer: producer)
        }
    }

    /// Writes the records of one pack read's reply (after stepping aside for express work).
    func write(_ read: PackRead, reply: RedisReplyReference, run: inout TaskRun, producer: KafkaProducer) throws {
        stepAside()
        if let error = packReader.error(in: reply, of: read.command) { throw error }
        if read.isWholeSlot {
            guard reply.isArray, reply.count % 2 == 0 else {
                throw RedisError(code: .unexpectedReply, message: "HGETALL \(read.key) did not reply with field-value pairs")
            }
            try write(
                packs: reply, first: 1, step: 2, key: read.key, slot: read.slot, filter: read.filter, run: &run, producer: producer)
        } else {
            guard reply.isArray else {
                throw RedisError(code: .unexpectedReply, message: "HMGET \(read.key) did not reply with an array")
            }
            try write(
                packs: reply, first: 0, step: 1, key: read.key, slot: read.slot, filter: read.filter, run: &run, producer: producer)
        }
    }

    /// The number of packs of each of `slots` (positions in use or freed, from the length of
    /// the `live` bitmap, over `SlotLayout.positionsPerPack`), in one round trip.
    func packCounts(_ slots: [Int]) throws -> [Int: Int] {
        guard !slots.isEmpty else { return [:] }
        let commands = slots.map { RedisCommand("STRLEN", layout.liveKey(slot: $0), isReadOnly: true) }
        return try redis.withPipelineRepliesBlocking(commands) { replies in
            var counts: [Int: Int] = [:]
            for (index, slot) in slots.enumerated() {
                if let error = redis.error(in: replies[index], of: commands[index]) { throw error }
                let positions = (replies[index].integer ?? 0) * 8
                counts[slot] = (positions + SlotLayout.positionsPerPack - 1) / SlotLayout.positionsPerPack
            }
            return counts
        }
    }

    /// Registrations in each of `slots` (`SCARD all`), in one round trip.
    func slotSizes(_ slots: Range<Int>) throws -> [Int] {
        let commands = slots.map { RedisCommand.scard(layout.allKey(slot: $0)) }
        return try redis.withPipelineRepliesBlocking(commands) { replies in
            try zip(commands, replies).map { command, reply in
                if let error = redis.error(in: reply, of: command) { throw error }
                return reply.integer ?? Int.max
            }
        }
    }
}
