import Foundation
import HeraldDomain
import HeraldKafka
import HeraldRedis
import HeraldRegistry
import Logging

/// A broadcast, or the scan plan of an expression: every registration of the given slots,
/// streamed from the slots' view packs (and, for a scan, tested against the expression).
extension TaskExecutor {
    /// At most this many packs are read at once without asking the slot's size (1/16 of a slot).
    static let smallRead = 16

    /// Packs per `HMGET` so one reply holds about `limit` registrations.
    static func packsPerRead(registrations: Int, limit: Int) -> Int {
        max(1, SlotLayout.packsPerSlot * limit / max(registrations, 1))
    }

    /// Every registration of `slots` (each with its size, `SCARD all`; `all` and the packs
    /// always hold the same ids) that `filter` selects (all of them without one), from the
    /// slots' view packs, which hold ids and views together.
    ///
    /// A slot of at most `snapshotReadLimit` registrations is then read with one
    /// `HGETALL`, a consistent snapshot; a bigger one in runs of packs with `HMGET`, so memory
    /// stays bounded whatever the slot size (a registration never changes pack, so each one is
    /// read once even while the slot changes). The reads are streamed
    /// (`RedisConnection.streamRepliesBlocking`): Redis prepares the next reply while this
    /// lane writes the records of the current one, so the lane does not stand still waiting
    /// for Redis at every slot while the producer's next batch waits to be filled.
    func deliverEverything(slots: [(slot: Int, registrations: Int)], filter: TagMatcher?, run: inout TaskRun, producer: KafkaProducer)
        throws
    {
        let layout = configuration.layout
        var reads: [(command: RedisCommand, key: String, isWholeSlot: Bool)] = []
        for (slot, registrations) in slots where registrations > 0 {
            let packsKey = layout.packsKey(slot: slot)
            if registrations <= configuration.snapshotReadLimit {
                reads.append((.hgetall(packsKey), packsKey, true))
                continue
            }
            let packsPerRead = Self.packsPerRead(registrations: registrations, limit: configuration.snapshotReadLimit)
            for start in stride(from: 0, to: SlotLayout.packsPerSlot, by: packsPerRead) {
                var command = RedisCommand("HMGET", isReadOnly: true)
                command.append(packsKey)
                for index in start..<min(start + packsPerRead, SlotLayout.packsPerSlot) {
                    command.append(SlotLayout.packFields[index])
                }
                reads.append((command, packsKey, false))
            }
        }
        try packReader.streamRepliesBlocking(reads.map(\.command)) { index, reply in
            gate?.yieldIfBusy()
            let read = reads[index]
            if let error = packReader.error(in: reply, of: read.command) { throw error }
            if read.isWholeSlot {
                guard reply.isArray, reply.count % 2 == 0 else {
                    throw RedisError(code: .unexpectedReply, message: "HGETALL \(read.key) did not reply with field-value pairs")
                }
                try write(packs: reply, first: 1, step: 2, key: read.key, filter: filter, run: &run, producer: producer)
            } else {
                guard reply.isArray else {
                    throw RedisError(code: .unexpectedReply, message: "HMGET \(read.key) did not reply with an array")
                }
                try write(packs: reply, first: 0, step: 1, key: read.key, filter: filter, run: &run, producer: producer)
            }
        }
    }

    /// Registrations in each of `slots` (`SCARD all`), in one round trip.
    func slotSizes(_ slots: Range<Int>) throws -> [Int] {
        let commands = slots.map { RedisCommand.scard(configuration.layout.allKey(slot: $0)) }
        return try redis.withPipelineRepliesBlocking(commands) { replies in
            try zip(commands, replies).map { command, reply in
                if let error = redis.error(in: reply, of: command) { throw error }
                return reply.integer ?? Int.max
            }
        }
    }
}
