import Foundation
import HeraldDomain
import HeraldKafka
import HeraldRedis
import HeraldRegistry
import Logging

/// An expression's audience, slot by slot: the set holding it (Redis set operations into
/// scratch sets, or a tag's set as it is), read in SSCAN pages of up to `snapshotReadLimit`
/// members, whose view packs are fetched with HMGET, each pack once.
extension TaskExecutor {
    func deliver(slot: Int, scratch: String, run: inout TaskRun, producer: KafkaProducer) throws {
        let (source, temporaries) = try resolve(slot: slot, scratch: scratch, plan: run.plan)
        defer {
            if !temporaries.isEmpty { _ = try? redis.sendBlocking(.del(temporaries)) }
        }
        let layout = configuration.layout
        let packsKey = layout.packsKey(slot: slot)
        let limit = max(1, configuration.snapshotReadLimit)
        var packsPerRead: Int?
        var cursor: UInt64 = 0
        // An SSCAN cursor means something only on the node that issued it. If the slot moved
        // to another master between two pages (a reshard: the client followed MOVED or ASK),
        // the rest of the scan could skip or repeat members, so the task is done again.
        var redirections = redis.statistics.redirections
        repeat {
            // Up to `limit` members (whole SSCAN pages; ids copied once, flat), then the packs
            // holding them, each pack once, so a slot's packs are read about once per `limit`
            // members however the members spread over them.
            members.removeAll(keepingCapacity: true)
            repeat {
                gate?.yieldIfBusy()
                let continuing = cursor != 0
                cursor = try scan(source, cursor: cursor, count: configuration.scanCount, into: &members)
                let now = redis.statistics.redirections
                if continuing, now != redirections {
                    throw IndexNotReady(message: "slot \(slot) moved to another Redis master while its audience was read")
                }
                redirections = now
            } while cursor != 0 && members.count < limit
            guard !members.isEmpty else { continue }
            try deliverMembers(packsKey: packsKey, run: &run, producer: producer) {
                if let packsPerRead { return packsPerRead }
                let computed = try Self.packsPerRead(registrations: slotSize(slot), limit: limit)
                packsPerRead = computed
                return computed
            }
        } while cursor != 0
    }

    /// Registrations in `slot` (`SCARD all`; `all` and the packs always hold the same ids).
    func slotSize(_ slot: Int) throws -> Int {
        try slotSizes(slot..<(slot + 1))[0]
    }

    /// Delivers to `members`: groups them by pack, reads the packs holding them with `HMGET`
    /// (each pack once) and finds each member in its pack. Up to `smallRead` packs come in one
    /// read (a one-user event needs one or two, and no slot size); more come in runs of
    /// `packsPerRead()` packs. A member missing from its pack was removed after the `SSCAN`
    /// (`registration_gone`).
    func deliverMembers(
        packsKey: String, run: inout TaskRun, producer: KafkaProducer, packsPerRead: () throws -> Int
    ) throws {
        // Counting sort of the members by pack: members of pack p are
        // byPack[packStarts[p]..<packStarts[p + 1]].
        memberPacks.removeAll(keepingCapacity: true)
        for position in packStarts.indices { packStarts[position] = 0 }
        for index in members.indices {
            let pack = members.withBytes(at: index) { SlotLayout.pack(of: $0) }
            memberPacks.append(pack)
            packStarts[pack + 1] += 1
        }
        for pack in 0..<SlotLayout.packsPerSlot { packStarts[pack + 1] += packStarts[pack] }
        byPack.removeAll(keepingCapacity: true)
        byPack.append(contentsOf: repeatElement(0, count: members.count))
        var next = Array(packStarts.dropLast())
        for (index, pack) in memberPacks.enumerated() {
            byPack[next[pack]] = index
            next[pack] += 1
        }

        var distinct = 0
        for pack in 0..<SlotLayout.packsPerSlot where packStarts[pack + 1] > packStarts[pack] { distinct += 1 }
        let perRead = distinct <= Self.smallRead ? SlotLayout.packsPerSlot : try packsPerRead()
        for first in stride(from: 0, to: SlotLayout.packsPerSlot, by: perRead) {
            let needed = (first..<min(first + perRead, SlotLayout.packsPerSlot)).filter { packStarts[$0 + 1] > packStarts[$0] }
            guard !needed.isEmpty else { continue }
            gate?.yieldIfBusy()
            var command = RedisCommand("HMGET", isReadOnly: true)
            command.append(packsKey)
            for pack in needed { command.append(SlotLayout.packFields[pack]) }
            try redis.withPipelineRepliesBlocking([command]) { replies in
                let reply = replies[0]
                if let error = redis.error(in: reply, of: command) { throw error }
                guard reply.isArray, reply.count == needed.count else {
                    throw RedisError(code: .unexpectedReply, message: "HMGET \(packsKey) did not reply with one value per pack")
                }
                let clock = PageClock()
                var delivered = 0
                for (position, pack) in needed.enumerated() {
                    let packBytes = reply[position].bytes
                    for entry in packStarts[pack]..<packStarts[pack + 1] {
                        try members.withBytes(at: byPack[entry]) { id in
                            let view = packBytes.flatMap { ViewPack.view(of: id, in: $0) }
                            if try write(id: id, view: view, clock: clock, run: &run, producer: producer) { delivered += 1 }
                        }
                    }
                }
                finishPage(delivered: delivered, clock: clock, run: &run)
            }
        }
    }

    /// True when the audience is every registration: no expression, or one that plans to the
    /// slot's `all` set without any set operation.
    static func selectsEverything(_ plan: TagSetPlan?) -> Bool {
        guard let plan else { return true }
        return plan.steps.isEmpty && plan.result == .all
    }

    /// `SSCAN` from `cursor` as its own round trip; fills `members`, returns the next cursor.
    func scan(_ source: String, cursor: UInt64, count: Int, into members: inout FlatByteStrings) throws -> UInt64 {
        let command = RedisCommand.sscan(source, cursor: cursor, count: count)
        return try redis.withPipelineRepliesBlocking([command]) { replies in
            if let error = redis.error(in: replies[0], of: command) { throw error }
            return try Self.readPage(replies[0], command: "SSCAN", source: source, into: &members)
        }
    }

    /// An `SSCAN` reply: `[cursor, [member, ...]]`.
    static func readPage(
        _ reply: RedisReplyReference, command: String, source: String, into members: inout FlatByteStrings
    ) throws -> UInt64 {
        guard reply.count == 2, let cursorBytes = reply[0].bytes, let cursor = UInt64(decimal: cursorBytes), reply[1].isArray
        else {
            throw RedisError(code: .unexpectedReply, message: "\(command) \(source) did not reply with a page")
        }
        let page = reply[1]
        for index in 0..<page.count {
            if let bytes = page[index].bytes { members.append(bytes) }
        }
        return cursor
    }

    /// The set holding the audience within `slot`, computing it into scratch sets if needed.
    func resolve(slot: Int, scratch: String, plan: TagSetPlan?) throws -> (String, [String]) {
        let layout = configuration.layout
        guard let plan else { return (layout.allKey(slot: slot), []) }
        func key(_ operand: TagSetPlan.Operand) -> String {
            switch operand {
            case .tag(let tag): layout.tagKey(slot: slot, tag: tag)
            case .all: layout.allKey(slot: slot)
            case .temporary(let index): layout.temporaryKey(slot: slot, task: scratch, step: index)
            }
        }
        guard !plan.steps.isEmpty else { return (key(plan.result), []) }
        var commands: [RedisCommand] = []
        var temporaries: [String] = []
        for step in plan.steps {
            let destination = key(.temporary(step.destination))
            let sources = step.sources.map(key)
            switch step {
            case .union: commands.append(.sunionstore(destination, sources))
            case .intersection: commands.append(.sinterstore(destination, sources))
            case .difference: commands.append(.sdiffstore(destination, sources))
            }
            commands.append(.expire(destination, seconds: configuration.temporaryTTLSeconds))
            temporaries.append(destination)
        }
        for reply in try redis.pipelineBlocking(commands) { _ = try reply.get() }
        return (key(plan.result), temporaries)
    }
}
