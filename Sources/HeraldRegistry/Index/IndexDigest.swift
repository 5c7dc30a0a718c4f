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
