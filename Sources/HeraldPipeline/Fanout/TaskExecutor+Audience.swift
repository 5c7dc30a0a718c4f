import Foundation
import HeraldDomain
import HeraldKafka
import HeraldRedis
import HeraldRegistry
import Logging

/// An expression's audience, slot by slot: the set holding it (Redis set operations into
/// scratch sets, or a tag's set as it is), read in SSCAN pages of up to `snapshotReadLimit`
/// members, whose positions are read with one HMGET and the packs of those positions with
/// another, each pack once.
extension TaskExecutor {
    func deliver(slot: Int, scratch: String, run: inout TaskRun, producer: KafkaProducer) throws {
        let (source, temporaries) = try resolve(slot: slot, scratch: scratch, plan: run.plan)
        defer {
            if !temporaries.isEmpty { _ = try? redis.sendBlocking(.del(temporaries)) }
        }
        let limit = max(1, configuration.snapshotReadLimit)
        var cursor: UInt64 = 0
        // An SSCAN cursor means something only on the node that issued it. If the slot moved
        // to another master between two pages (a reshard: the client followed MOVED or ASK),
        // the rest of the scan could skip or repeat members, so the task is done again.
        var redirections = redis.statistics.redirections
        repeat {
            // Up to `limit` members (whole SSCAN pages; ids copied once, flat), then the packs
            // holding them, each pack once.
            members.removeAll(keepingCapacity: true)
            repeat {
                stepAside()
                let continuing = cursor != 0
                cursor = try scan(source, cursor: cursor, count: configuration.scanCount, into: &members)
                let now = redis.statistics.redirections
                if continuing, now != redirections {
                    throw IndexNotReady(message: "slot \(slot) moved to another Redis master while its audience was read")
                }
                redirections = now
            } while cursor != 0 && members.count < limit
            guard !members.isEmpty else { continue }
            try deliverMembers(slot: slot, run: &run, producer: producer)
        } while cursor != 0
    }

    /// Delivers to `members`: reads their positions (`HMGET pos`), orders them by pack, reads
    /// the packs holding them with `HMGET` (each pack once, `packsPerRead` at a time) and
    /// finds each member in its pack. A member with no position, or missing from its pack, was
    /// removed after the `SSCAN` (`registration_gone`).
    func deliverMembers(slot: Int, run: inout TaskRun, producer: KafkaProducer) throws {
        let packsKey = layout.packsKey(slot: slot)
        var lookup = RedisCommand("HMGET", isReadOnly: true)
        lookup.append(layout.positionsKey(slot: slot))
        for index in members.indices { members.withBytes(at: index) { lookup.append(Array($0)) } }
        memberPositions.removeAll(keepingCapacity: true)
        try redis.withPipelineRepliesBlocking([lookup]) { replies in
            let reply = replies[0]
            if let error = redis.error(in: reply, of: lookup) { throw error }
            guard reply.isArray, reply.count == members.count else {
                throw RedisError(code: .unexpectedReply, message: "HMGET of positions in slot \(slot) did not reply one per member")
            }
            for index in 0..<reply.count {
                memberPositions.append(reply[index].bytes.flatMap { UInt64(decimal: $0) }.map { Int($0) } ?? -1)
            }
        }
        byPack.removeAll(keepingCapacity: true)
        for (index, position) in memberPositions.enumerated() {
            if position >= 0 { byPack.append(index) } else { run.skip("registration_gone") }
        }
        byPack.sort { memberPositions[$0] < memberPositions[$1] }
        // Runs of members whose packs make up one read.
        var start = 0
        while start < byPack.count {
            var packs: [Int] = []
            var end = start
            while end < byPack.count {
                let pack = SlotLayout.pack(ofPosition: memberPositions[byPack[end]])
                if packs.last != pack {
                    if packs.count == packsPerRead { break }
                    packs.append(pack)
                }
                end += 1
            }
            stepAside()
            try checkStop(&run, now: ContinuousClock.now)
            if run.stopped { return }
            let read = hmget(slot: slot, packs: packs, filter: nil)
            try redis.withPipelineRepliesBlocking([read.command]) { replies in
                let reply = replies[0]
                if let error = redis.error(in: reply, of: read.command) { throw error }
                guard reply.isArray, reply.count == packs.count else {
                    throw RedisError(code: .unexpectedReply, message: "HMGET \(packsKey) did not reply with one value per pack")
                }
                let clock = PageClock()
                var delivered = 0
                var packIndex = 0
                for entry in start..<end {
                    let member = byPack[entry]
                    let pack = SlotLayout.pack(ofPosition: memberPositions[member])
                    while packs[packIndex] != pack { packIndex += 1 }
                    let packBytes = reply[packIndex].bytes
                    try members.withBytes(at: member) { id in
                        let view = packBytes.flatMap { ViewPack.view(of: id, in: $0) }
                        let place = (slot: slot, position: memberPositions[member])
                        if try write(id: id, view: view, at: place, clock: clock, run: &run, producer: producer) { delivered += 1 }
                    }
                }
                finishPage(delivered: delivered, clock: clock, run: &run)
            }
            start = end
        }
    }

    /// A test send's audience (`testRecipients`), slot by slot, whatever the event's `tags`:
    /// the registrations named by id that live in the slot, those of the installations named
    /// (their `$InstallationId:{…}` set, in the installation's slot) and those of the users
    /// named (their `$UserId:{…}` set, in every slot), each once.
    func deliver(testRecipients recipients: [TestRecipient], slots: Range<Int>, run: inout TaskRun, producer: KafkaProducer) throws {
        var read = 0
        for slot in slots {
            var commands: [RedisCommand] = []
            // The ids asked about with SISMEMBER, by command index.
            var named: [Int: [UInt8]] = [:]
            for recipient in recipients {
                if case .device(let id) = recipient {
                    guard layout.slot(of: id) == slot else { continue }
                    named[commands.count] = Array(id.utf8)
                    commands.append(.sismember(layout.allKey(slot: slot), id))
                }
                commands.append(.smembers(layout.tagKey(slot: slot, tag: recipient.tag)))
            }
            guard !commands.isEmpty else { continue }
            members.removeAll(keepingCapacity: true)
            var seen: Set<[UInt8]> = []
            try redis.withPipelineRepliesBlocking(commands) { replies in
                for (index, command) in commands.enumerated() {
                    let reply = replies[index]
                    if let error = redis.error(in: reply, of: command) { throw error }
                    if reply.isArray {
                        for element in 0..<reply.count {
                            if let id = reply[element].bytes, seen.insert(Array(id)).inserted { members.append(id) }
                        }
                    } else if reply.integer == 1, let id = named[index], seen.insert(id).inserted {
                        // SISMEMBER all <id>: the id is a live registration of the slot.
                        id.withUnsafeBytes { members.append($0) }
                    }
                }
            }
            guard !members.isEmpty else { continue }
            read += 1
            try checkStop(&run, now: ContinuousClock.now)
            if run.stopped { return }
            try deliverMembers(slot: slot, run: &run, producer: producer)
        }
        run.plans[FanoutPlanKind.test.rawValue] = read
    }

    /// A direct send's devices (`direct`): each handle as a native registration of its platform
    /// would be, under its stand-in id (`DirectTarget.registrationId`); no slot is read.
    func deliver(direct targets: [DirectTarget], run: inout TaskRun, producer: KafkaProducer) throws {
        try checkStop(&run, now: ContinuousClock.now)
        if run.stopped { return }
        let clock = PageClock()
        var delivered = 0
        for (position, target) in targets.enumerated() {
            let view = RegistrationView(
                platform: target.platform.rawValue, expiresAtEpochSeconds: nil, templateName: "", templateKey: "",
                handle: target.handle)
            let id = Array(DirectTarget.registrationId(position: position).utf8)
            let encoded = Array(view.encoded.utf8)
            let wrote = try id.withUnsafeBytes { id in
                try encoded.withUnsafeBytes { view in
                    try write(id: id, view: view, at: (slot: 0, position: position), clock: clock, run: &run, producer: producer)
                }
            }
            if wrote { delivered += 1 }
        }
        finishPage(delivered: delivered, clock: clock, run: &run)
        run.plans[FanoutPlanKind.direct.rawValue] = 1
    }

    /// A correction's audience: the registrations the corrected event reached on one deliveries
    /// partition (`CorrectionAudience`), less those its sender never sent to (the `unsent` set
    /// of the original, `SlotLayout.unsentKey`), slot by slot, each rendered with its current
    /// view (a token that changed since gets the correction on its new token; a registration
    /// removed since is `registration_gone`).
    func deliver(correction audience: inout CorrectionAudience, run: inout TaskRun, producer: KafkaProducer) throws {
        guard let original = run.task.event.id else { return }
        if case .array(let unsent) = try redis.sendBlocking(.smembers(layout.unsentKey(eventId: original))) {
            audience.removeUnsent(unsent.compactMap(\.string), original: original)
        }
        if audience.unsent > 0 { run.skipped["not_sent", default: 0] += audience.unsent }
        let bySlot = Dictionary(grouping: audience.registrations, by: { layout.slot(of: $0) })
        for slot in bySlot.keys.sorted() {
            members.removeAll(keepingCapacity: true)
            for id in bySlot[slot]! {
                Array(id.utf8).withUnsafeBytes { members.append($0) }
            }
            try checkStop(&run, now: ContinuousClock.now)
            if run.stopped { return }
            try deliverMembers(slot: slot, run: &run, producer: producer)
        }
        run.plans[FanoutPlanKind.correction.rawValue] = bySlot.count
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
