import Foundation
import HeraldDomain
import HeraldRedis

extension RegistrationIndex {
    /// What the index holds for one registration id.
    public enum StoredRegistration: Sendable {
        /// The document bytes (contract shape) of a live registration.
        case live(document: [UInt8])
        /// Deleted; still known so writes answer 410.
        case gone
        case absent
    }

    /// The stored document of `id`. A registration whose `expiresAt` has passed counts as
    /// absent even before the sweep removes it.
    public func storedRegistration(id: String, now: Date = Date()) async throws -> StoredRegistration {
        let slot = layout.slot(of: id)
        let replies = try await pool.withConnection { connection in
            try await connection.pipeline([
                RedisCommand("ZSCORE", layout.expiryKey(slot: slot), id, isReadOnly: true),
                .get(layout.documentKey(slot: slot, id: id)),
                .sismember(layout.goneKey(slot: slot), id),
            ])
        }
        if let document = try replies[1].get().bytes {
            // Expired but not swept yet: `exp` holds its expiry (the scripts keep it with the view).
            if let expiry = try replies[0].get().string.flatMap({ Double($0) }), expiry <= now.timeIntervalSince1970 {
                return .absent
            }
            return .live(document: document)
        }
        return try replies[2].get().int == 1 ? .gone : .absent
    }

    /// The installation document and state of `installationId`.
    public func storedInstallation(id installationId: String) async throws -> StoredRegistration {
        let slot = layout.slot(of: installationId)
        let replies = try await pool.withConnection { connection in
            try await connection.pipeline([
                .get(layout.installationKey(slot: slot, installationId: installationId)),
                .sismember(layout.goneKey(slot: slot), RegistryChange.installationKeyPrefix + installationId),
            ])
        }
        if let document = try replies[0].get().bytes { return .live(document: document) }
        return try replies[1].get().int == 1 ? .gone : .absent
    }

    /// The newest version applied for `id` (a registration id, or `$installation:<id>` with
    /// `slotId` the installation id); 0 when none.
    public func appliedVersion(member: String, slotId: String) async throws -> Int64 {
        let slot = layout.slot(of: slotId)
        let reply = try await pool.withConnection { connection in
            try await connection.send(.hmget(layout.versionKey(slot: slot), [member]))
        }
        return reply.array?.first?.string.flatMap { Int64($0) } ?? 0
    }

    /// Reserves a version for a write of `member` (a registration id or
    /// `$installation:<id>`) in the slot of `slotId`. See docs/redis-layout.md, "reserve".
    public func reserve(
        member: String, slotId: String, expected: Int64?, refuseGone: Bool, now: Date = Date()
    ) async throws -> VersionReservation {
        let prefix = layout.slotPrefix(layout.slot(of: slotId))
        let nowMicros = Int64((now.timeIntervalSince1970 * 1_000_000).rounded(.down))
        let command = Self.script(
            RegistryScripts.reserve, prefix: prefix,
            arguments: [member, expected.map(String.init) ?? "", nowMicros, refuseGone ? "1" : "0"]
        )
        let reply = try await pool.withConnection { try await $0.send(command) }
        guard let parts = reply.array, parts.count == 2, let status = parts[0].int,
            let version = parts[1].int.map(Int64.init)
        else {
            throw RedisError(code: .unexpectedReply, message: "reserve script answered \(reply)")
        }
        switch status {
        case 0: return .reserved(version)
        case 412: return .preconditionFailed(current: version)
        case 409: return .conflict(inFlight: version)
        case 410: return .gone
        default: throw RedisError(code: .unexpectedReply, message: "reserve script answered status \(status)")
        }
    }

    /// Gives a reservation back when its write failed before reaching Kafka, so a later
    /// conditional write is not refused with 409 because of it. Only removes the lease if it
    /// is still exactly `version`.
    public func release(member: String, slotId: String, version: Int64) async throws {
        let prefix = layout.slotPrefix(layout.slot(of: slotId))
        let command = Self.script(RegistryScripts.release, prefix: prefix, arguments: [member, version])
        _ = try await pool.withConnection { try await $0.send(command) }
    }
}

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
