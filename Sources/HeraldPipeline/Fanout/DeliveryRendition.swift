import Foundation
import HeraldDomain

/// Everything of a delivery record that is the same for every device receiving one rendered
/// payload on one platform, pre-encoded once, so writing a record costs two escaped ids, a
/// handle and a few copies.
///
/// The bytes written are identical to `DeliveryRecord.encode(into:)` for the same record
/// (a test holds the two together); only the work is split differently.
final class DeliveryRendition: Sendable {
    let platform: Platform
    let templateName: String
    /// The four constant parts back to back, so writing a record reads one buffer (one
    /// retain, not four): `{"deliveryId":"<event>/` (opening), then
    /// `/<template>","eventId":"<event>","registrationId":"` (after the id in the delivery id),
    /// `","platform":"<platform>","handle":"` (after the registration id), and
    /// `","template":"<t>","payload":"<escaped>","headers":{..},"expiresAt":..,"publishedAt":..,"renderedAt":"`
    /// (after the handle).
    private let parts: [UInt8]
    private let openingEnd: Int
    private let afterRegistrationInIdEnd: Int
    private let afterRegistrationIdEnd: Int

    init(
        eventId: String, platform: Platform, templateName: String, payload: [UInt8], headers: DeliveryHeaders,
        expiresAt: Date?, publishedAt: Date?
    ) {
        self.platform = platform
        self.templateName = templateName
        var opening: [UInt8] = []
        Self.raw(#"{"deliveryId":""#, &opening)
        Self.escaped(eventId.utf8, &opening)
        opening.append(UInt8(ascii: "/"))

        var idTail: [UInt8] = [UInt8(ascii: "/")]
        Self.escaped(templateName.utf8, &idTail)
        Self.raw(#"","eventId":""#, &idTail)
        Self.escaped(eventId.utf8, &idTail)
        Self.raw(#"","registrationId":""#, &idTail)

        var platformPart: [UInt8] = []
        Self.raw(#"","platform":""#, &platformPart)
        Self.escaped(platform.rawValue.utf8, &platformPart)
        Self.raw(#"","handle":""#, &platformPart)

        var tail: [UInt8] = []
        Self.raw(#"","template":""#, &tail)
        Self.escaped(templateName.utf8, &tail)
        Self.raw(#"","payload":""#, &tail)
        Self.escaped(payload, &tail)
        Self.raw(#"","headers":{"#, &tail)
        for (position, field) in headers.fields.enumerated() {
            if position > 0 { tail.append(UInt8(ascii: ",")) }
            tail.append(UInt8(ascii: "\""))
            Self.escaped(field.name.utf8, &tail)
            Self.raw(#"":""#, &tail)
            Self.escaped(field.value.utf8, &tail)
            tail.append(UInt8(ascii: "\""))
        }
        Self.raw(#"},"expiresAt":"#, &tail)
        Self.timestamp(expiresAt, .secondsWhenExact, &tail)
        Self.raw(#","publishedAt":"#, &tail)
        Self.timestamp(publishedAt, .milliseconds, &tail)
        Self.raw(#","renderedAt":""#, &tail)
        parts = opening + idTail + platformPart + tail
        openingEnd = opening.count
        afterRegistrationInIdEnd = openingEnd + idTail.count
        afterRegistrationIdEnd = afterRegistrationInIdEnd + platformPart.count
    }

    /// Appends one record. `renderedAt` is the already formatted timestamp (the caller formats
    /// it once per page of recipients).
    @inline(__always)
    func write(registrationId: some Collection<UInt8>, handle: some Collection<UInt8>, renderedAt: [UInt8], into bytes: inout [UInt8]) {
        parts.withUnsafeBufferPointer { parts in
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: parts[0..<openingEnd]))
            Self.escaped(registrationId, &bytes)
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: parts[openingEnd..<afterRegistrationInIdEnd]))
            Self.escaped(registrationId, &bytes)
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: parts[afterRegistrationInIdEnd..<afterRegistrationIdEnd]))
            Self.escaped(handle, &bytes)
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: parts[afterRegistrationIdEnd...]))
        }
        bytes.append(contentsOf: renderedAt)
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: "}"))
    }

    // MARK: JSON bytes (the same escaping rules as the domain's encoder)

    private static func raw(_ text: StaticString, _ bytes: inout [UInt8]) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    @inline(__always)
    static func escaped(_ source: some Collection<UInt8>, _ bytes: inout [UInt8]) {
        let done: Void? = source.withContiguousStorageIfAvailable { JSONEscaping.append($0, to: &bytes) }
        if done == nil {
            Array(source).withUnsafeBufferPointer { JSONEscaping.append($0, to: &bytes) }
        }
    }

    static func timestamp(_ date: Date?, _ precision: ISO8601Timestamp.Precision, _ bytes: inout [UInt8]) {
        guard let date else {
            raw("null", &bytes)
            return
        }
        bytes.append(UInt8(ascii: "\""))
        ISO8601Timestamp.append(date, precision: precision, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }
}
