/// Issues registration ids that prove on their own that Herald issued them.
///
/// An id is 32 lowercase hex digits: 10 random bytes followed by the first 6 bytes of a
/// SipHash-2-4 MAC of those bytes under a key derived from the configured secret. The API
/// can therefore answer 410 for an id that was never issued without keeping any state, and a
/// guessed or forged id is accepted with probability 2^-48. Changing the secret invalidates
/// every id issued before, so deployments keep it stable (`HERALD_REGISTRATION_ID_SECRET`).
public struct RegistrationIdIssuer: Sendable {
    private static let randomBytes = 10
    private static let macBytes = 6
    public static let idLength = 2 * (randomBytes + macBytes)

    private let k0: UInt64
    private let k1: UInt64

    public init(secret: String) {
        // Stretch the secret into a 128-bit SipHash key with two fixed-key SipHash passes,
        // so secrets of any length work and the key never equals the secret's bytes.
        let bytes = Array(secret.utf8)
        k0 = SipHash.hash(bytes, k0: 0x4865_7261_6c64_4b30, k1: 0x7265_6769_7374_7279)
        k1 = SipHash.hash(bytes, k0: 0x4865_7261_6c64_4b31, k1: 0x7265_6769_7374_7279)
    }

    /// A fresh id from the system's random number generator.
    public func issue() -> String {
        var generator = SystemRandomNumberGenerator()
        return issue(using: &generator)
    }

    public func issue(using generator: inout some RandomNumberGenerator) -> String {
        var bytes = (0..<Self.randomBytes).map { _ in UInt8.random(in: 0...255, using: &generator) }
        bytes.append(contentsOf: mac(bytes))
        return Self.hex(bytes)
    }

    /// True when `id` has the issued form and its MAC matches; false for anything else.
    public func isIssued(_ id: String) -> Bool {
        guard id.utf8.count == Self.idLength, let bytes = Self.bytes(fromHex: id) else { return false }
        let expected = mac(bytes[0..<Self.randomBytes])
        // Compare every byte so the time taken does not reveal how much of a guess was right.
        var difference: UInt8 = 0
        for (offset, byte) in expected.enumerated() { difference |= byte ^ bytes[Self.randomBytes + offset] }
        return difference == 0
    }

    private func mac(_ random: some Collection<UInt8>) -> [UInt8] {
        let tag = SipHash.hash(random, k0: k0, k1: k1)
        return (0..<Self.macBytes).map { UInt8(truncatingIfNeeded: tag >> (8 * UInt64($0))) }
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Only lowercase hex is accepted, so each id has exactly one spelling.
    private static func bytes(fromHex text: String) -> [UInt8]? {
        var result: [UInt8] = []
        result.reserveCapacity(text.utf8.count / 2)
        var high: UInt8? = nil
        for character in text.utf8 {
            let value: UInt8
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = character - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = character - UInt8(ascii: "a") + 10
            default: return nil
            }
            if let first = high {
                result.append(first << 4 | value)
                high = nil
            } else {
                high = value
            }
        }
        return high == nil ? result : nil
    }
}
