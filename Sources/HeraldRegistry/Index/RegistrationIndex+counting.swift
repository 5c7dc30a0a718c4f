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

    /// Adds the template content keys `keys` to the hub's `templatesKey` set unless it would then
    /// hold more than `limit`; one script, so API processes writing at once never pass it.
    /// Answers whether they were added and how many the set held before.
    public func admitTemplates(keys: [String], limit: Int) async throws -> (admitted: Bool, held: Int) {
        let unique = Array(Set(keys)).sorted()
        let reply = try await pool.withConnection {
            try await $0.evalScript(Self.admitTemplatesScript, keys: [layout.templatesKey], arguments: [String(limit)] + unique)
        }
        guard case .array(let values) = reply, values.count == 2, let admitted = values[0].int, let held = values[1].int else {
            throw RedisError(code: .unexpectedReply, message: "the templates script answered \(reply), expected {admitted, held}")
        }
        return (admitted == 1, held)
    }

    static let admitTemplatesScript = RedisScript(
        #"""
        local limit = tonumber(ARGV[1])
        local held = redis.call('SCARD', KEYS[1])
        local new = 0
        for i = 2, #ARGV do
          if redis.call('SISMEMBER', KEYS[1], ARGV[i]) == 0 then new = new + 1 end
        end
        if new == 0 then return {1, held} end
        if held + new > limit then return {0, held} end
        redis.call('SADD', KEYS[1], unpack(ARGV, 2))
        return {1, held}
        """#)

    private func sum(_ commands: [RedisCommand]) async throws -> Int {
        let replies = try await pool.withConnection { try await $0.pipeline(commands) }
        var total = 0
        for reply in replies { total += try reply.get().int ?? 0 }
        return total
    }
}
