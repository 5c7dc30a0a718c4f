/// SipHash-2-4 (Aumasson and Bernstein): a keyed 64-bit pseudorandom function, used as the
/// short MAC inside registration ids. Small enough to carry here, so the registry needs no
/// cryptography package for it.
struct SipHash {
    private var v0: UInt64, v1: UInt64, v2: UInt64, v3: UInt64

    /// Hashes `message` with the 128-bit key `(k0, k1)`.
    static func hash(_ message: some Collection<UInt8>, k0: UInt64, k1: UInt64) -> UInt64 {
        var state = SipHash(k0: k0, k1: k1)
        return state.finish(message)
    }

    private init(k0: UInt64, k1: UInt64) {
        v0 = 0x736f_6d65_7073_6575 ^ k0
        v1 = 0x646f_7261_6e64_6f6d ^ k1
        v2 = 0x6c79_6765_6e65_7261 ^ k0
        v3 = 0x7465_6462_7974_6573 ^ k1
    }

    private mutating func round() {
        v0 &+= v1
        v1 = v1.rotatedLeft(13)
        v1 ^= v0
        v0 = v0.rotatedLeft(32)
        v2 &+= v3
        v3 = v3.rotatedLeft(16)
        v3 ^= v2
        v0 &+= v3
        v3 = v3.rotatedLeft(21)
        v3 ^= v0
        v2 &+= v1
        v1 = v1.rotatedLeft(17)
        v1 ^= v2
        v2 = v2.rotatedLeft(32)
    }

    private mutating func compress(_ word: UInt64) {
        v3 ^= word
        round()
        round()
        v0 ^= word
    }

    private mutating func finish(_ message: some Collection<UInt8>) -> UInt64 {
        var word: UInt64 = 0
        var filled = 0
        for byte in message {
            word |= UInt64(byte) << (8 * UInt64(filled))
            filled += 1
            if filled == 8 {
                compress(word)
                word = 0
                filled = 0
            }
        }
        word |= UInt64(truncatingIfNeeded: message.count) << 56
        compress(word)
        v2 ^= 0xff
        round()
        round()
        round()
        round()
        return v0 ^ v1 ^ v2 ^ v3
    }
}

extension UInt64 {
    fileprivate func rotatedLeft(_ count: UInt64) -> UInt64 { (self << count) | (self >> (64 - count)) }
}
