/// The content key of a template body under `herald:tpl:<key>`: 32 hex digits computed from
/// the canonical template JSON, so identical templates (one per language, shared by millions
/// of devices) are stored once.
///
/// docs/redis-layout.md names the first 16 bytes of SHA-256. Until the registry may depend on
/// swift-crypto this is FNV-1a 128-bit, which is stable and well spread but not collision
/// resistant against someone crafting templates; swap the body of `of(_:)` for SHA-256 and
/// nothing else changes (a reindex rewrites every view with the new keys).
public enum TemplateContentKey {
    public static func of(_ canonicalJSON: some Collection<UInt8>) -> String {
        var hash: UInt128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d
        let prime: UInt128 = 0x0000_0000_0100_0000_0000_0000_0000_013b
        for byte in canonicalJSON {
            hash ^= UInt128(byte)
            hash = hash &* prime
        }
        let text = String(hash, radix: 16)
        return String(repeating: "0", count: 32 - text.count) + text
    }
}
