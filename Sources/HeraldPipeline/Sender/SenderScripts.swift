import HeraldRedis

/// The sender's Lua script (keys in docs/redis-layout.md).
enum SenderScripts {
    /// Adds one batch's receipts of one event from one deliveries partition to the event's
    /// outcome counts, counting each record once however often its batch is done again: the
    /// hash remembers the highest offset counted per partition (`applied:<partition>`), and
    /// records at or below it are skipped. A partition's records are handled in order, and a
    /// batch done again starts at the committed offset, so this is exact.
    ///
    /// KEYS[1] counts hash. ARGV: partition, TTL seconds, then offset/field pairs in offset order.
    static let countReceipts = RedisScript(
        #"""
        local key = KEYS[1]
        local appliedField = 'applied:' .. ARGV[1]
        local applied = tonumber(redis.call('HGET', key, appliedField) or '-1')
        local highest = applied
        for i = 3, #ARGV, 2 do
          local offset = tonumber(ARGV[i])
          if offset > applied then
            redis.call('HINCRBY', key, ARGV[i + 1], 1)
            if offset > highest then highest = offset end
          end
        end
        if highest > applied then redis.call('HSET', key, appliedField, highest) end
        redis.call('EXPIRE', key, ARGV[2])
        return highest
        """#)
}
