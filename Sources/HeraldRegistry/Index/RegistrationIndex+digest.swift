import HeraldRedis

extension RegistrationIndex {
    /// Fingerprints every key of every hub but the meta hash (see `IndexDigest`). Walks the whole keyspace
    /// with SCAN (on a cluster, on every master), so it is a test and diagnostics tool, not
    /// something to run against a large production Redis.
    ///
    /// Positions depend on the order registrations arrived in, so two builds of one registry
    /// may place them differently: the digest fingerprints packs as their (id, view) entries
    /// and `pos` as its ids, leaves the position structures out (`live`, `bits:`, and the
    /// groups' `packgroup`, `groups`, `open:`, `spare`), and instead checks each slot's
    /// positions against its sets (`PositionCheck`). A problem is fingerprinted as a key of its
    /// own, `<slot prefix>!<problem>`, so a digest with one never equals a sound one.
    public func digest() async throws -> IndexDigest {
        let listed = try await pool.withConnection { connection in
            try await connection.keys(matching: layout.prefix + ":*") + connection.keys(matching: layout.prefix + "@*")
        }
        // Not scratch sets, and not `herald:meta`: its epoch is unique to each build of the
        // index (`IndexEpoch`), and its layout is checked on every start.
        let keys = Set(listed).filter { !$0.contains("}:tmp:") && $0 != layout.metaKey }.sorted()
        var perKey: [String: String] = [:]
        var check = PositionCheck()
        for chunk in stride(from: 0, to: keys.count, by: 500).map({ Array(keys[$0..<min($0 + 500, keys.count)]) }) {
            let types = try await pool.withConnection { connection in
                try await connection.pipeline(chunk.map { RedisCommand("TYPE", $0, isReadOnly: true) })
            }
            let contents = try await pool.withConnection { connection in
                try await connection.pipeline(
                    zip(chunk, types).map { key, type in
                        Self.contentCommand(key: key, type: (try? type.get().string) ?? "none")
                    })
            }
            for (index, key) in chunk.enumerated() {
                let type = try types[index].get().string ?? "none"
                let reply = try contents[index].get()
                guard let kind = check.take(key: key, reply: reply) else { continue }
                var hasher = DigestHasher()
                hasher.add(type)
                for part in try Self.canonicalParts(type: type, reply: reply, kind: kind) { hasher.add(part) }
                perKey[key] = hasher.hex
            }
        }
        for (key, problem) in check.problems() { perKey[key] = problem }
        var total = DigestHasher()
        for key in perKey.keys.sorted() {
            total.add(key)
            total.add(perKey[key]!)
        }
        return IndexDigest(keyCount: perKey.count, value: total.hex, keys: perKey)
    }

    private static func contentCommand(key: String, type: String) -> RedisCommand {
        switch type {
        case "string": .get(key)
        case "set": .smembers(key)
        case "hash": .hgetall(key)
        case "zset": RedisCommand("ZRANGE", key, "0", "-1", "WITHSCORES", isReadOnly: true)
        case "list": RedisCommand("LRANGE", key, "0", "-1", isReadOnly: true)
        default: .exists(key)
        }
    }

    /// The key's content as a list of byte strings in a canonical order. A `packs` hash is
    /// fingerprinted as its (id, view) entries sorted (a malformed pack as its bytes), a `pos`
    /// hash as its ids.
    private static func canonicalParts(type: String, reply: RedisValue, kind: KeyKind) throws -> [[UInt8]] {
        switch type {
        case "string":
            return [reply.bytes ?? []]
        case "set":
            return (reply.array ?? []).compactMap(\.bytes).sorted { $0.lexicographicallyPrecedes($1) }
        case "hash", "zset":
            let flat = reply.array ?? []
            var pairs: [[UInt8]] = []
            var index = 0
            while index + 1 < flat.count {
                let field = flat[index].bytes ?? []
                let value = flat[index + 1].bytes ?? []
                if kind == .packs, let entries = ViewPack.entries(value) {
                    for entry in entries { pairs.append(Array(entry.id.utf8) + [0] + Array(entry.view.utf8)) }
                } else if kind == .positions {
                    pairs.append(field)
                } else {
                    pairs.append(field + [0] + value)
                }
                index += 2
            }
            return pairs.sorted { $0.lexicographicallyPrecedes($1) }
        case "list":
            return (reply.array ?? []).compactMap(\.bytes)
        default:
            return []
        }
    }
}

/// A fingerprint of every key under the Herald prefix, sensitive to key names, types and
/// contents (set and hash members in sorted order, sorted-set scores, string bytes). Two
/// Redis states with the same digest hold the same registry; tests use it to prove that
/// `FLUSHALL` + reindex reproduces the state the indexer built.
public struct IndexDigest: Sendable, Hashable, CustomStringConvertible {
    /// Keys included (scratch `tmp:` keys, which expire on their own, are left out).
    public var keyCount: Int
    /// Hex fingerprint over all keys in sorted order.
    public var value: String
    /// Per-key fingerprints, for showing which keys differ when two digests do not match.
    public var keys: [String: String]

    public var description: String { "\(keyCount) keys, digest \(value)" }

    /// Keys whose fingerprint differs or that exist on one side only.
    public func differences(from other: IndexDigest) -> [String] {
        Set(keys.keys).union(other.keys.keys).filter { keys[$0] != other.keys[$0] }.sorted()
    }
}

/// FNV-1a 64-bit over length-prefixed parts, so ("ab","c") and ("a","bc") differ; the index
/// digest and the status rebuild use it. Not a cryptographic hash: the digest compares
/// states, it does not protect them.
package struct DigestHasher {
    package init() {}

    private var state: UInt64 = 0xcbf2_9ce4_8422_2325

    package mutating func add(_ text: String) { add(Array(text.utf8)) }

    package mutating func add(_ bytes: [UInt8]) {
        var length = UInt64(bytes.count)
        for _ in 0..<8 {
            mix(UInt8(truncatingIfNeeded: length))
            length >>= 8
        }
        for byte in bytes { mix(byte) }
    }

    private mutating func mix(_ byte: UInt8) {
        state ^= UInt64(byte)
        state = state &* 0x0000_0100_0000_01b3
    }

    package var hex: String {
        let text = String(state, radix: 16)
        return String(repeating: "0", count: 16 - text.count) + text
    }
}
