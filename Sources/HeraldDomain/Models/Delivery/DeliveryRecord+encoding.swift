import Foundation

extension DeliveryRecord {
    /// Appends the record as compact JSON, fields in the contract's order, without
    /// Foundation's encoder: this runs once per device of a broadcast.
    ///
    /// `expiresAt` and `publishedAt` are written as `null` when unset; `expiresAt` keeps
    /// whole seconds when it has no fraction (`19:00:00Z`), the other instants always have
    /// milliseconds (`18:00:00.120Z`).
    public func encode(into bytes: inout [UInt8]) {
        JSONOutput.appendRaw(#"{"deliveryId":"#, to: &bytes)
        appendDeliveryId(to: &bytes)
        JSONOutput.appendRaw(#","eventId":"#, to: &bytes)
        JSONOutput.appendString(eventId, to: &bytes)
        JSONOutput.appendRaw(#","registrationId":"#, to: &bytes)
        JSONOutput.appendString(registrationId, to: &bytes)
        JSONOutput.appendRaw(#","platform":"#, to: &bytes)
        JSONOutput.appendString(platform.rawValue, to: &bytes)
        JSONOutput.appendRaw(#","handle":"#, to: &bytes)
        JSONOutput.appendString(handle, to: &bytes)
        JSONOutput.appendRaw(#","template":"#, to: &bytes)
        JSONOutput.appendString(template, to: &bytes)
        JSONOutput.appendRaw(#","payload":"#, to: &bytes)
        JSONOutput.appendString(payload, to: &bytes)
        JSONOutput.appendRaw(#","headers":{"#, to: &bytes)
        for (position, field) in headers.fields.enumerated() {
            if position > 0 { bytes.append(UInt8(ascii: ",")) }
            JSONOutput.appendString(field.name, to: &bytes)
            bytes.append(UInt8(ascii: ":"))
            JSONOutput.appendString(field.value, to: &bytes)
        }
        JSONOutput.appendRaw(#"},"expiresAt":"#, to: &bytes)
        Self.appendTimestamp(expiresAt, precision: .secondsWhenExact, to: &bytes)
        JSONOutput.appendRaw(#","publishedAt":"#, to: &bytes)
        Self.appendTimestamp(publishedAt, precision: .milliseconds, to: &bytes)
        JSONOutput.appendRaw(#","renderedAt":"#, to: &bytes)
        Self.appendTimestamp(renderedAt, precision: .milliseconds, to: &bytes)
        bytes.append(UInt8(ascii: "}"))
    }

    /// The record as compact JSON bytes.
    public func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256 + payload.utf8.count + handle.utf8.count)
        encode(into: &bytes)
        return bytes
    }

    /// Writes the id's three parts escaped in place, without building the joined string.
    private func appendDeliveryId(to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        JSONOutput.appendEscaped(eventId, to: &bytes)
        bytes.append(UInt8(ascii: "/"))
        JSONOutput.appendEscaped(registrationId, to: &bytes)
        bytes.append(UInt8(ascii: "/"))
        JSONOutput.appendEscaped(template, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    private static func appendTimestamp(_ date: Date?, precision: ISO8601Timestamp.Precision, to bytes: inout [UInt8]) {
        guard let date else {
            JSONOutput.appendRaw("null", to: &bytes)
            return
        }
        bytes.append(UInt8(ascii: "\""))
        ISO8601Timestamp.append(date, precision: precision, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }
}
