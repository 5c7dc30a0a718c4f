import HeraldRedis

/// How the digest fingerprints a key (`PositionCheck.take`).
enum KeyKind {
    /// A slot's `packs` hash: its (id, view) entries, whatever their positions.
    case packs
    /// A slot's `pos` hash: its ids.
    case positions
    case other
}

/// Checks, for the index digest, that each slot's position structures agree with the
/// registry they index: every live registration holds one position of its own (`pos`), `live`
/// marks exactly those, every pack up to the highest is either spare (no registration) or has
/// a group whose open positions are exactly the pack's positions no registration holds, the
/// groups' pack counts agree, each view sits in the pack of its position, and every tag bitmap
/// marks exactly the positions of its set's members, which have one whenever they are at
/// least `SlotLayout.bitmapThreshold`.
struct PositionCheck {
    private var positions: [String: [String: Int]] = [:]
    private var packs: [String: [(field: String, position: Int, id: String)]] = [:]
    private var live: [String: [UInt8]] = [:]
    private var packGroups: [String: [Int: String]] = [:]
    private var groupPacks: [String: [String: Int]] = [:]
    private var open: [String: [String: [Int]]] = [:]
    private var spare: [String: [Int]] = [:]
    private var bitmaps: [String: [String: [UInt8]]] = [:]
    private var tagSets: [String: [String: [String]]] = [:]

    /// Records what the check needs of `key` and says how the digest fingerprints it; nil for
    /// a position structure (`live`, `packgroup`, `groups`, `open:`, `spare`, `bits:`), which
    /// the digest leaves out (its content depends on arrival order).
    mutating func take(key: String, reply: RedisValue) -> KeyKind? {
        guard let close = key.range(of: "}:") else { return .other }
        let prefix = String(key[..<close.upperBound])
        let name = key[close.upperBound...]
        switch name {
        case "pos":
            var map: [String: Int] = [:]
            let flat = reply.array ?? []
            for index in stride(from: 0, to: flat.count - 1, by: 2) {
                map[flat[index].string ?? ""] = flat[index + 1].string.flatMap { Int($0) } ?? -1
            }
            positions[prefix] = map
            return .positions
        case "packs":
            let flat = reply.array ?? []
            var entries: [(String, Int, String)] = []
            for index in stride(from: 0, to: flat.count - 1, by: 2) {
                let field = flat[index].string ?? ""
                for entry in ViewPack.entries(flat[index + 1].bytes ?? []) ?? [] { entries.append((field, entry.position, entry.id)) }
            }
            packs[prefix] = entries
            return .packs
        case "live":
            live[prefix] = reply.bytes ?? []
            return nil
        case "packgroup":
            var map: [Int: String] = [:]
            for (field, value) in Self.pairs(reply) { map[Int(field) ?? -1] = value }
            packGroups[prefix] = map
            return nil
        case "groups":
            var map: [String: Int] = [:]
            for (field, value) in Self.pairs(reply) { map[field] = Int(value) ?? -1 }
            groupPacks[prefix] = map
            return nil
        case "spare":
            spare[prefix] = (reply.array ?? []).map { $0.string.flatMap { Int($0) } ?? -1 }
            return nil
        default:
            if name.hasPrefix("open:") {
                // ZRANGE WITHSCORES: member, score, ...
                let flat = reply.array ?? []
                open[prefix, default: [:]][String(name.dropFirst(5))] = stride(from: 0, to: flat.count - 1, by: 2).map {
                    flat[$0].string.flatMap { Int($0) } ?? -1
                }
                return nil
            }
            if name.hasPrefix("bits:") {
                bitmaps[prefix, default: [:]][String(name.dropFirst(5))] = reply.bytes ?? []
                return nil
            }
            if name.hasPrefix("tag:") {
                tagSets[prefix, default: [:]][String(name.dropFirst(4))] = (reply.array ?? []).compactMap(\.string)
            }
            return .other
        }
    }

    /// `<slot prefix>!<problem>` -> "inconsistent", for every problem found.
    func problems() -> [String: String] {
        var found: [String: String] = [:]
        func problem(_ prefix: String, _ text: String) { found[prefix + "!" + text] = "inconsistent" }
        let prefixes = Set(positions.keys).union(packs.keys).union(live.keys).union(packGroups.keys).union(groupPacks.keys)
            .union(open.keys).union(spare.keys).union(bitmaps.keys)
        for prefix in prefixes {
            let held = positions[prefix] ?? [:]
            let used = Set(held.values)
            if used.count != held.count || used.contains(where: { $0 < 0 }) { problem(prefix, "positions not distinct") }
            if Self.positions(in: live[prefix] ?? []) != used { problem(prefix, "live differs from pos") }
            for text in Self.packProblems(
                used: used, packs: ((live[prefix]?.count ?? 0) * 8 + SlotLayout.positionsPerPack - 1) / SlotLayout.positionsPerPack,
                packGroups: packGroups[prefix] ?? [:], groupPacks: groupPacks[prefix] ?? [:], open: open[prefix] ?? [:],
                spare: spare[prefix] ?? [])
            {
                problem(prefix, text)
            }
            let entries = packs[prefix] ?? []
            if Set(entries.map(\.id)) != Set(held.keys) || entries.count != held.count { problem(prefix, "packs differ from pos") }
            for entry in entries
            where held[entry.id] != entry.position || entry.field != SlotLayout.packField(SlotLayout.pack(ofPosition: entry.position)) {
                problem(prefix, "view of \(entry.id) not at its position")
            }
            let sets = tagSets[prefix] ?? [:]
            for (tag, bitmap) in bitmaps[prefix] ?? [:] {
                let members = Set((sets[tag] ?? []).map { held[$0] ?? -1 })
                if Self.positions(in: bitmap) != members { problem(prefix, "bits:\(tag) differs from tag:\(tag)") }
            }
            for (tag, members) in sets where members.count >= SlotLayout.bitmapThreshold && bitmaps[prefix]?[tag] == nil {
                problem(prefix, "tag:\(tag) has no bitmap")
            }
        }
        return found
    }

    /// What is wrong with a slot's packs: each of the `packs` packs up to the highest is spare
    /// or has a group, never both; a grouped pack's positions are each held (`used`) or open in
    /// its group, and only those are open; `groups` counts each group's packs.
    static func packProblems(
        used: Set<Int>, packs: Int, packGroups: [Int: String], groupPacks: [String: Int], open: [String: [Int]], spare: [Int]
    ) -> [String] {
        var found: [String] = []
        let perPack = SlotLayout.positionsPerPack
        let spareSet = Set(spare)
        if spareSet.count != spare.count || spare.contains(where: { $0 < 0 || $0 >= packs }) { found.append("spare packs not distinct") }
        var expectedOpen: [String: Set<Int>] = [:]
        var counts: [String: Int] = [:]
        for pack in 0..<packs {
            let positions = Set(pack * perPack..<(pack + 1) * perPack)
            switch (packGroups[pack], spareSet.contains(pack)) {
            case (nil, true):
                if !positions.isDisjoint(with: used) { found.append("spare pack \(pack) holds registrations") }
            case (let group?, false):
                counts[group, default: 0] += 1
                expectedOpen[group, default: []].formUnion(positions.subtracting(used))
            default:
                found.append("pack \(pack) is not spare or grouped once")
            }
        }
        if packGroups.keys.contains(where: { $0 < 0 || $0 >= packs }) { found.append("a group for a pack past the last") }
        if counts != groupPacks { found.append("groups differ from packgroup") }
        let actualOpen = open.mapValues { Set($0) }.filter { !$0.value.isEmpty }
        if actualOpen != expectedOpen.filter({ !$0.value.isEmpty }) || open.values.contains(where: { Set($0).count != $0.count }) {
            found.append("open positions differ from the packs' free positions")
        }
        return found
    }

    /// A hash's field-value pairs (`HGETALL`) as strings.
    private static func pairs(_ reply: RedisValue) -> [(String, String)] {
        let flat = reply.array ?? []
        return stride(from: 0, to: flat.count - 1, by: 2).map { (flat[$0].string ?? "", flat[$0 + 1].string ?? "") }
    }

    /// The positions whose bits are set (bit 0 is the high bit of the first byte, as `SETBIT`).
    static func positions(in bitmap: [UInt8]) -> Set<Int> {
        var set: Set<Int> = []
        for (index, byte) in bitmap.enumerated() where byte != 0 {
            for bit in 0..<8 where byte & (0x80 >> UInt8(bit)) != 0 { set.insert(index * 8 + bit) }
        }
        return set
    }
}
