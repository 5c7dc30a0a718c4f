import Crypto

/// The content key of a template body under `herald:tpl:<key>`: the first 16 bytes of the
/// SHA-256 of the canonical template JSON, as 32 hex digits, so identical templates (one per
/// language, shared by millions of devices) are stored once and a crafted template cannot
/// collide with another one.
public enum TemplateContentKey {
    public static func of(_ canonicalJSON: some Collection<UInt8>) -> String {
        let digest = SHA256.hash(data: Array(canonicalJSON))
        var text = ""
        text.reserveCapacity(32)
        for byte in digest.prefix(16) {
            text += String(byte >> 4, radix: 16) + String(byte & 0x0f, radix: 16)
        }
        return text
    }
}
