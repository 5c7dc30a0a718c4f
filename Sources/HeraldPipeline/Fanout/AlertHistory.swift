import Foundation
import HeraldDomain
import HeraldRedis
import HeraldRegistry

/// What a task knows of its hub's recent alerts, for frequency caps (`FrequencyCap`): the
/// positions of its slots past a cap, and the positions it delivered to.
///
/// Every event of a hub with caps leaves, per slot it delivered in, a bitmap of the positions
/// it reached (`SlotLayout.alertedKey`), and its id in the hub's alert list
/// (`SlotLayout.alertsKey`, scored by when it was delivered). A capped event's task reads the
/// bitmaps of the events in the longest window of the rules that hold it back, one `MGET` per
/// slot, and counts per position: a device is not counted per device in Redis, so a broadcast
/// to a million devices costs a few reads and writes per slot, not a million counters.
struct AlertHistory {
    /// The rules that hold this event back (empty: it is only recorded).
    let rules: [FrequencyCap]
    /// How long this event's bitmaps are kept: the hub's longest window.
    let keepSeconds: Int
    /// The task's first slot: the arrays below are indexed by slot minus it (the fan-out
    /// looks them up once per device, so not through a dictionary).
    let firstSlot: Int
    /// Positions past a cap, by slot (bit 7 of byte 0 is position 0, as in a Redis bitmap;
    /// empty: none).
    var capped: [[UInt8]]
    /// Positions this task delivered to, by slot.
    var delivered: [[UInt8]]
    /// The earlier alerts read, by slot, for the devices with a cap of their own
    /// (`Registration.frequencyCap`).
    var alerts: [[(ageSeconds: Int, bitmap: [UInt8])]]
    /// Slots holding a registration with a cap of its own (`$FrequencyCap:{any}`).
    var ownCapSlots: [Bool]

    /// The most recent alerts a task reads (a cap above this many alerts in its window
    /// counts only these).
    static let maxAlertsRead = 1_000
    /// How long the alert list keeps an event: the longest window a rule may have.
    static let listSeconds = FrequencyCap.windowRange.upperBound

    init(rules: [FrequencyCap], keepSeconds: Int, slots: Range<Int>) {
        self.rules = rules
        self.keepSeconds = keepSeconds
        firstSlot = slots.lowerBound
        capped = Array(repeating: [], count: slots.count)
        delivered = Array(repeating: [], count: slots.count)
        alerts = Array(repeating: [], count: slots.count)
        ownCapSlots = Array(repeating: false, count: slots.count)
    }

    /// Whether devices of `slot` may have a cap of their own (their views are then read for it).
    @inline(__always)
    func hasOwnCaps(slot: Int) -> Bool { ownCapSlots[slot - firstSlot] }

    /// Whether the device at `position` is past a rule: the hub's `maxAlerts`, or `own` (the
    /// device's own cap) in each rule's window.
    @inline(__always)
    func isCapped(slot: Int, position: Int, own: Int? = nil) -> Bool {
        if let own {
            let earlier = alerts[slot - firstSlot]
            return rules.contains { rule in
                earlier.count { $0.ageSeconds < rule.windowSeconds && Self.isSet($0.bitmap, position) } >= own
            }
        }
        return Self.isSet(capped[slot - firstSlot], position)
    }

    /// The device's own cap named in its view's comma-joined `tags` (`$FrequencyCap:{n}`).
    static func ownCap(in tags: UnsafeRawBufferPointer) -> Int? {
        for tag in tags.split(separator: UInt8(ascii: ",")) where tag.first == UInt8(ascii: "$") {
            if let own = FrequencyCap.override(fromTag: String(decoding: tag, as: UTF8.self)) { return own }
        }
        return nil
    }

    @inline(__always)
    mutating func recordDelivery(slot: Int, position: Int) {
        Self.set(&delivered[slot - firstSlot], position)
    }

    /// The positions past one of `rules`, from the bitmaps of earlier alerts with their ages.
    static func cappedPositions(alerts: [(ageSeconds: Int, bitmap: [UInt8])], rules: [FrequencyCap]) -> [UInt8] {
        let length = alerts.map(\.bitmap.count).max() ?? 0
        var capped = [UInt8](repeating: 0, count: length)
        var counts = [UInt16](repeating: 0, count: length * 8)
        for rule in rules {
            for index in counts.indices { counts[index] = 0 }
            for alert in alerts where alert.ageSeconds < rule.windowSeconds {
                for (byteIndex, byte) in alert.bitmap.enumerated() where byte != 0 {
                    var bits = byte
                    while bits != 0 {
                        let bit = bits.leadingZeroBitCount
                        counts[byteIndex * 8 + bit] &+= 1
                        bits &= ~(0x80 >> UInt8(bit))
                    }
                }
            }
            for position in counts.indices where Int(counts[position]) >= rule.maxAlerts { set(&capped, position) }
        }
        return capped
    }

    @inline(__always)
    static func isSet(_ bitmap: [UInt8], _ position: Int) -> Bool {
        let byte = position >> 3
        return byte < bitmap.count && bitmap[byte] & (0x80 >> UInt8(position & 7)) != 0
    }

    @inline(__always)
    static func set(_ bitmap: inout [UInt8], _ position: Int) {
        let byte = position >> 3
        if byte >= bitmap.count { bitmap.append(contentsOf: repeatElement(0, count: byte + 1 - bitmap.count)) }
        bitmap[byte] |= 0x80 >> UInt8(position & 7)
    }
}

extension TaskExecutor {
    /// The alert history of `task`'s slots when its hub has frequency caps (nil otherwise, and
    /// for test sends, direct sends and corrections, which neither count nor are capped). Reads the recent
    /// alerts only when a rule holds the event back.
    func alertHistory(of task: FanoutTask, epoch: String, now: Date) throws -> AlertHistory? {
        guard let caps = task.frequencyCaps, !caps.isEmpty, task.event.testRecipients == nil, task.event.direct == nil,
            task.correction == nil
        else {
            return nil
        }
        var history = AlertHistory(
            rules: caps.applying(to: task.event.urgency), keepSeconds: caps.longestWindowSeconds, slots: task.slots)
        guard let longest = history.rules.map(\.windowSeconds).max() else { return history }
        let nowMs = Int((now.timeIntervalSince1970 * 1_000).rounded(.down))
        let recent = try redis.sendBlocking(
            RedisCommand(
                "ZREVRANGEBYSCORE", layout.alertsKey, "+inf", String(nowMs - longest * 1_000), "WITHSCORES", "LIMIT", "0",
                String(AlertHistory.maxAlertsRead), isReadOnly: true))
        var events: [(id: String, ageSeconds: Int)] = []
        let pairs = recent.array ?? []
        for index in stride(from: 0, to: pairs.count - 1, by: 2) {
            guard let id = pairs[index].string, id != task.eventId, let score = pairs[index + 1].string.flatMap(Double.init) else {
                continue
            }
            events.append((id, max(0, (nowMs - Int(score)) / 1_000)))
        }
        guard !events.isEmpty else { return history }
        let slots = Array(task.slots)
        var commands = slots.map { slot in
            RedisCommand(
                "MGET", arguments: events.map { layout.alertedKey(slot: slot, epoch: epoch, eventId: $0.id) }, isReadOnly: true)
        }
        commands += slots.map { RedisCommand("EXISTS", layout.tagKey(slot: $0, tag: FrequencyCap.anyTag), isReadOnly: true) }
        let replies = try redis.pipelineBlocking(commands)
        for (index, slot) in slots.enumerated() where try replies[slots.count + index].get().int == 1 {
            history.ownCapSlots[slot - history.firstSlot] = true
        }
        for (slot, reply) in zip(slots, replies) {
            let bitmaps = try reply.get().array ?? []
            var alerts: [(ageSeconds: Int, bitmap: [UInt8])] = []
            for (event, bitmap) in zip(events, bitmaps) {
                if let bytes = bitmap.bytes, !bytes.isEmpty { alerts.append((event.ageSeconds, bytes)) }
            }
            guard !alerts.isEmpty else { continue }
            history.alerts[slot - history.firstSlot] = alerts
            let capped = AlertHistory.cappedPositions(alerts: alerts, rules: history.rules)
            if capped.contains(where: { $0 != 0 }) { history.capped[slot - history.firstSlot] = capped }
        }
        return history
    }

    /// Records where `task` delivered (its slots' bitmaps and the event in the hub's alert list),
    /// before its transaction commits: a task done again writes the same.
    func save(_ history: AlertHistory, of task: FanoutTask, epoch: String, now: Date) throws {
        guard history.delivered.contains(where: { !$0.isEmpty }) else { return }
        let nowMs = Int((now.timeIntervalSince1970 * 1_000).rounded(.down))
        var commands = history.delivered.enumerated().filter { !$0.element.isEmpty }.map { offset, bitmap in
            RedisCommand.set(
                layout.alertedKey(slot: history.firstSlot + offset, epoch: epoch, eventId: task.eventId), bitmap,
                expireSeconds: history.keepSeconds)
        }
        commands.append(RedisCommand("ZADD", layout.alertsKey, "NX", String(nowMs), task.eventId))
        commands.append(
            RedisCommand("ZREMRANGEBYSCORE", layout.alertsKey, "-inf", "(" + String(nowMs - AlertHistory.listSeconds * 1_000)))
        commands.append(.expire(layout.alertsKey, seconds: AlertHistory.listSeconds))
        for reply in try redis.pipelineBlocking(commands) { _ = try reply.get() }
    }
}
