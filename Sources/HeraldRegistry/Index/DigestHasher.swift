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
