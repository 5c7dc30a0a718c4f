/// Redis Cluster's key-to-slot rule: CRC16 (XMODEM: polynomial 0x1021, initial value 0) of
/// the key's hash tag, modulo 16384. The hash tag is the part between the first `{` and the
/// first `}` after it when that part is not empty; otherwise the whole key is hashed. Every
/// Herald key of a registration slot carries the tag `{s}`, so a slot's keys share one node.
public enum RedisClusterSlot {
    public static let count = 16_384

    /// The cluster slot of `key`.
    public static func of<Key: Collection<UInt8>>(_ key: Key) -> Int {
        Int(crc16(hashTag(of: key)) & 0x3FFF)
    }

    /// The bytes of `key` that are hashed: its hash tag, or all of it.
    public static func hashTag<Key: Collection<UInt8>>(of key: Key) -> Key.SubSequence {
        if let open = key.firstIndex(of: UInt8(ascii: "{")) {
            let afterOpen = key.index(after: open)
            if let close = key[afterOpen...].firstIndex(of: UInt8(ascii: "}")), close != afterOpen {
                return key[afterOpen..<close]
            }
        }
        return key[...]
    }

    /// CRC16-CCITT (XMODEM), bit by bit: keys are short and this runs once per command.
    public static func crc16<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> UInt16 {
        var crc: UInt16 = 0
        for byte in bytes {
            crc ^= UInt16(byte) << 8
            for _ in 0..<8 {
                crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1
            }
        }
        return crc
    }
}
