import HeraldRedis

extension RegistrationIndex {
    /// Which per-slot set a listing walks.
    public enum Membership: Sendable, Hashable {
        case all
        case tag(String)
        case handle(String)

        func key(in layout: SlotLayout, slot: Int) -> String {
            switch self {
            case .all: layout.allKey(slot: slot)
            case .tag(let tag): layout.tagKey(slot: slot, tag: tag)
            case .handle(let handle): layout.handleKey(slot: slot, handle: handle)
            }
        }
    }

    /// Where a registration listing resumes: `<slot>:<SSCAN cursor>`.
    /// Where a listing resumes: a slot, an SSCAN cursor in it, and how many ids of the page
    /// that cursor returns were already listed (SSCAN's COUNT is only a hint, so a page can
    /// hold more ids than a listing's `limit`; the rest are listed next time).
    public struct ScanCursor: Sendable, Hashable, CustomStringConvertible {
        public var slot: Int
        public var scan: UInt64
        public var skip: Int

        public init(slot: Int, scan: UInt64, skip: Int = 0) {
            self.slot = slot
            self.scan = scan
            self.skip = skip
        }

        /// nil for text that is not a cursor of a layout with `slotCount` slots
        /// (`slot:scan`, or `slot:scan:skip`).
        public init?(_ text: String, slotCount: Int) {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2 || parts.count == 3, let slot = Int(parts[0]), (0..<slotCount).contains(slot),
                let scan = UInt64(parts[1])
            else { return nil }
            var skip = 0
            if parts.count == 3 {
                guard let parsed = Int(parts[2]), (1...1_000_000).contains(parsed) else { return nil }
                skip = parsed
            }
            self.init(slot: slot, scan: scan, skip: skip)
        }

        public var description: String { skip == 0 ? "\(slot):\(scan)" : "\(slot):\(scan):\(skip)" }
    }

    /// Slots whose first SSCAN page is fetched in one round trip, so sparse tags (empty in
    /// most slots) do not cost one round trip per slot.
    static let slotWindow = 32

    /// One page of registration ids from `membership`, walking slot by slot with SSCAN.
    ///
    /// An SSCAN reply is never split (there is no way to resume inside one), so a page may
    /// hold a few more than `limit` ids; in exchange every id that stays in the set for the
    /// whole walk is returned, and, barring a rehash of a set that grows during the walk,
    /// exactly once. `next` is nil after the last slot.
    public func scanIds(
        _ membership: Membership, limit: Int, from cursor: ScanCursor?
    ) async throws -> (ids: [String], next: ScanCursor?) {
        var position = cursor ?? ScanCursor(slot: 0, scan: 0)
        var ids: [String] = []
        while ids.count < limit {
            let window = min(Self.slotWindow, layout.slotCount - position.slot)
            let count = max(limit - ids.count + position.skip, 16)
            let commands = (0..<window).map { offset in
                RedisCommand.sscan(
                    membership.key(in: layout, slot: position.slot + offset),
                    cursor: offset == 0 ? position.scan : 0, count: count
                )
            }
            let replies = try await pool.withConnection { try await $0.pipeline(commands) }
            for reply in replies {
                guard let page = try reply.get().scanPage else {
                    throw RedisError(code: .unexpectedReply, message: "SSCAN answered \(try reply.get())")
                }
                let fresh = page.elements.compactMap(\.string).dropFirst(position.skip)
                let room = limit - ids.count
                if fresh.count > room {
                    // The page holds more than the listing may return: resume inside it.
                    ids.append(contentsOf: fresh.prefix(room))
                    return (ids, ScanCursor(slot: position.slot, scan: position.scan, skip: position.skip + room))
                }
                ids.append(contentsOf: fresh)
                if page.cursor == 0 {
                    position = ScanCursor(slot: position.slot + 1, scan: 0)
                    if position.slot == layout.slotCount { return (ids, nil) }
                } else {
                    position = ScanCursor(slot: position.slot, scan: page.cursor)
                }
                // Later replies in the window are dropped; the cursor resumes exactly here.
                if ids.count >= limit || page.cursor != 0 { break }
            }
        }
        return (ids, position)
    }

    /// Slots whose views one page of a handle-prefix listing reads at most: the walk reads
    /// every view of a slot, so a page that finds few matches stops here and hands back a
    /// cursor rather than read the whole registry in one request.
    static let prefixSlotsPerPage = 512

    /// One page of the ids of registrations whose handle starts with `prefix`, walking the
    /// slots' view packs (`HVALS`) a window at a time: no index is kept by handle prefix, so
    /// this reads every view of the slots it visits; a page may be short, even empty, while
    /// `next` is not nil. Ids come sorted within a slot, so `skip` resumes inside one.
    public func scanIds(handlePrefix prefix: String, limit: Int, from cursor: ScanCursor?) async throws -> (
        ids: [String], next: ScanCursor?
    ) {
        var position = cursor ?? ScanCursor(slot: 0, scan: 0)
        let wanted = Array(prefix.utf8)
        let lastSlot = min(layout.slotCount, position.slot + Self.prefixSlotsPerPage)
        var ids: [String] = []
        while position.slot < lastSlot {
            let window = min(Self.slotWindow, lastSlot - position.slot)
            let commands = (0..<window).map { offset in RedisCommand("HVALS", layout.packsKey(slot: position.slot + offset)) }
            let replies = try await pool.withConnection { try await $0.pipeline(commands) }
            for reply in replies {
                guard let packs = try reply.get().array else {
                    throw RedisError(code: .unexpectedReply, message: "HVALS answered \(try reply.get())")
                }
                var matches: [String] = []
                for pack in packs.compactMap(\.bytes) {
                    pack.withUnsafeBytes { bytes in
                        ViewPack.forEachEntry(in: bytes) { _, id, view in
                            guard let fields = ViewFields(view), fields.handle.count >= wanted.count,
                                view[fields.handle.lowerBound..<(fields.handle.lowerBound + wanted.count)].elementsEqual(wanted)
                            else { return }
                            matches.append(String(decoding: id, as: UTF8.self))
                        }
                    }
                }
                matches.sort()
                let fresh = matches.dropFirst(position.skip)
                let room = limit - ids.count
                if fresh.count > room {
                    ids.append(contentsOf: fresh.prefix(room))
                    return (ids, ScanCursor(slot: position.slot, scan: 0, skip: position.skip + room))
                }
                ids.append(contentsOf: fresh)
                position = ScanCursor(slot: position.slot + 1, scan: 0)
                if position.slot == layout.slotCount { return (ids, nil) }
                if ids.count == limit { return (ids, position) }
            }
        }
        return (ids, position)
    }

    /// The documents of `ids` (one pipelined GET each, since they live in different slots);
    /// nil where an id has no document (deleted or expired meanwhile).
    public func documents(ofRegistrations ids: [String]) async throws -> [[UInt8]?] {
        if ids.isEmpty { return [] }
        let commands = ids.map { id in RedisCommand.get(layout.documentKey(slot: layout.slot(of: id), id: id)) }
        let replies = try await pool.withConnection { try await $0.pipeline(commands) }
        return try replies.map { try $0.get().bytes }
    }

    /// The members of `membership` in one slot (installation listings need a slot whole, to
    /// fold several template registrations into one installation).
    public func members(_ membership: Membership, slot: Int) async throws -> [String] {
        let reply = try await pool.withConnection { connection in
            try await connection.send(.smembers(membership.key(in: layout, slot: slot)))
        }
        return reply.array?.compactMap(\.string) ?? []
    }

    /// Installation documents for candidate installation ids in one slot; nil where absent.
    public func installationDocuments(ids: [String]) async throws -> [[UInt8]?] {
        if ids.isEmpty { return [] }
        let commands = ids.map { id in
            RedisCommand.get(layout.installationKey(slot: layout.slot(of: id), installationId: id))
        }
        let replies = try await pool.withConnection { try await $0.pipeline(commands) }
        return try replies.map { try $0.get().bytes }
    }
}
