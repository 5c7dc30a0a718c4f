import HeraldRedis

extension RegistrationIndex {
    /// Live registrations of this index's hub: the size of every slot's positions hash, in one
    /// pipeline (a round trip per cluster node).
    public func liveCount() async throws -> Int {
        try await sum((0..<layout.slotCount).map { RedisCommand("HLEN", layout.positionsKey(slot: $0), isReadOnly: true) })
    }

    /// Registrations of `handle` in this index's hub: the size of its set in every slot.
    public func count(handle: String) async throws -> Int {
        try await sum((0..<layout.slotCount).map { RedisCommand("SCARD", layout.handleKey(slot: $0, handle: handle), isReadOnly: true) })
    }

    private func sum(_ commands: [RedisCommand]) async throws -> Int {
        let replies = try await pool.withConnection { try await $0.pipeline(commands) }
        var total = 0
        for reply in replies { total += try reply.get().int ?? 0 }
        return total
    }
}
