/// What may go on the wire as an HTTP/2 header field (RFC 9113 §8.2.1) and how large a block
/// of them may be. Checked where a header enters (registration and installation templates, an
/// event's collapse id), when the fan-out renders a delivery's headers, and by the sender before
/// it writes a request: a bad field is that delivery's problem, never its connection's.
public enum HeaderFieldRules {
    /// The largest header block a delivery may carry, counted as RFC 9113 §6.5.2 counts
    /// `SETTINGS_MAX_HEADER_LIST_SIZE` (name + value + 32 bytes per field). Far above what any
    /// push service's headers need and under the 16 KiB that HTTP/2 servers commonly accept.
    public static let maxBlockBytes = 8_192

    /// The per-field overhead of RFC 9113's header list size.
    public static let fieldOverhead = 32

    /// Why `value` cannot be a header value, or `nil`. NUL, CR, LF and the other control
    /// characters but horizontal tab are refused: they would split or corrupt the header block.
    public static func valueProblem(_ value: String) -> String? {
        for (position, byte) in value.utf8.enumerated() where isControl(byte) {
            let name =
                switch byte {
                case 0x00: "NUL"
                case 0x0A: "a line feed (LF)"
                case 0x0D: "a carriage return (CR)"
                default: "control byte 0x\(String(byte, radix: 16, uppercase: true))"
                }
            return "a header value cannot contain control characters; found \(name) at position \(position + 1)"
        }
        return nil
    }

    /// The RFC 9113 size of one field.
    public static func fieldSize(name: String, value: String) -> Int {
        name.utf8.count + value.utf8.count + fieldOverhead
    }

    /// Why `headers` cannot be sent as they are, or `nil`: a value with a control character,
    /// or a block over `maxBlockBytes`.
    public static func problem(with headers: DeliveryHeaders, maxBlockBytes: Int = maxBlockBytes) -> String? {
        var size = 0
        for field in headers {
            if let problem = valueProblem(field.value) { return "header \(field.name): \(problem)" }
            size += fieldSize(name: field.name, value: field.value)
        }
        if size > maxBlockBytes { return "the headers add up to \(size) bytes; the limit is \(maxBlockBytes)" }
        return nil
    }

    static func isControl(_ byte: UInt8) -> Bool { (byte < 0x20 && byte != 0x09) || byte == 0x7F }
}
