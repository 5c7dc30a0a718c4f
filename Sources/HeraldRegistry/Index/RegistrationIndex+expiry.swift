import Foundation
import HeraldRedis

extension RegistrationIndex {
    /// Removes every registration whose `expiresAt` is at or before `now` from all sets of
    /// its slot (the `expire` script, pipelined over all slots, repeated while a slot still
    /// had more than `batchPerSlot` due). Returns how many were removed.
    @discardableResult
    public func sweepExpired(now: Date = Date(), batchPerSlot: Int = 1_000) async throws -> Int {
        let nowSeconds = Int64(now.timeIntervalSince1970)
        var pending = Array(0..<layout.slotCount)
        var removed = 0
        while !pending.isEmpty {
            let commands = pending.map { slot in
                Self.script(RegistryScripts.expire, prefix: layout.slotPrefix(slot), arguments: [nowSeconds, batchPerSlot])
            }
            let replies = try await pool.withConnection { try await $0.pipeline(commands) }
            var again: [Int] = []
            for (slot, reply) in zip(pending, replies) {
                let count = try reply.get().int ?? 0
                removed += count
                if count >= batchPerSlot { again.append(slot) }
            }
            pending = again
        }
        return removed
    }
}
