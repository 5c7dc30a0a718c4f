// The wire form. Herald formats RESP itself rather than through hiredis's argv formatter:
// a whole pipeline becomes one buffer handed to hiredis once, which profiling showed to be
// the largest client-side cost of pipelined GETs.
extension RedisCommand {
    /// Appends this command as a RESP array of bulk strings.
    func appendRESP(to buffer: inout [UInt8]) {
        buffer.append(UInt8(ascii: "*"))
        Self.appendDecimal(argumentEnds.count, to: &buffer)
        buffer.append(contentsOf: [0x0D, 0x0A] as [UInt8])
        storage.withUnsafeBufferPointer { bytes in
            var start = 0
            for end in argumentEnds {
                buffer.append(UInt8(ascii: "$"))
                Self.appendDecimal(end - start, to: &buffer)
                buffer.append(0x0D)
                buffer.append(0x0A)
                buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<end]))
                buffer.append(0x0D)
                buffer.append(0x0A)
                start = end
            }
        }
    }

    /// Bytes `appendRESP` writes at most: the arguments plus a generous 16 bytes per header.
    var respCapacityEstimate: Int { storage.count + 16 * (argumentEnds.count + 1) }

    static func appendDecimal(_ value: Int, to buffer: inout [UInt8]) {
        if value < 10 {
            buffer.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value))
            return
        }
        var digits:
            (
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8
            ) =
                (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        var rest = value
        withUnsafeMutableBytes(of: &digits) { raw in
            while rest > 0 {
                raw[count] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10)
                rest /= 10
                count += 1
            }
            for index in stride(from: count - 1, through: 0, by: -1) { buffer.append(raw[index]) }
        }
    }
}
