import Foundation

extension DeliveryRecord {
    /// Appends the record as compact JSON, fields in the contract's order, without
    /// Foundation's encoder.
    ///
    /// `expiresAt` and `publishedAt` are written as `null` when unset; `expiresAt` keeps
    /// whole seconds when it has no fraction (`19:00:00Z`), the other instants always have
    /// milliseconds (`18:00:00.120Z`).
    public func encode(into bytes: inout [UInt8]) {
        var renderedAtBytes: [UInt8] = []
        ISO8601Timestamp.append(renderedAt, precision: .milliseconds, to: &renderedAtBytes)
        Frame(
            hub: hub, eventId: eventId, platform: platform, templateName: template, payload: Array(payload.utf8), headers: headers,
            expiresAt: expiresAt, publishedAt: publishedAt, test: test, correctionOf: correctionOf, fallbacks: fallbacks
        ).write(registrationId: registrationId.utf8, handle: handle.utf8, renderedAt: renderedAtBytes, into: &bytes)
    }

    /// The record as compact JSON bytes.
    public func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256 + payload.utf8.count + handle.utf8.count)
        encode(into: &bytes)
        return bytes
    }

    /// The one writer of the delivery record's JSON: everything that is the same for every
    /// device receiving one rendered payload on one platform, encoded once, and `write`, which
    /// adds a device's ids, handle and render time. `encode(into:)` builds a frame per record;
    /// the fan-out builds one per (template, platform) of an event and writes every device of a
    /// broadcast through it, so a record there costs two escaped ids, a handle and four copies.
    public struct Frame: Sendable {
        /// The four constant parts back to back, so writing a record reads one buffer:
        /// `{"deliveryId":"<event>/` (opening, with `"hub":"<hub>",` first for a hub other than
        /// the default), then
        /// `/<template>","eventId":"<event>","registrationId":"` (after the id in the delivery
        /// id), `","platform":"<platform>","handle":"` (after the registration id), and
        /// `","template":"<t>","payload":"<escaped>","headers":{..},"expiresAt":..,"publishedAt":..,"renderedAt":"`
        /// (after the handle). A test send's records end in `,"test":true`, a correction's in
        /// `,"correctionOf":"<event>"`, one whose template read fallbacks in `,"fallbacks":[..]`.
        private let parts: [UInt8]
        private let closing: [UInt8]
        private let openingEnd: Int
        private let afterRegistrationInIdEnd: Int
        private let afterRegistrationIdEnd: Int

        public init(
            hub: HubName = .default, eventId: String, platform: Platform, templateName: String, payload: [UInt8], headers: DeliveryHeaders,
            expiresAt: Date?, publishedAt: Date?, test: Bool = false, correctionOf: String? = nil, fallbacks: [String] = []
        ) {
            var closing: [UInt8] = [UInt8(ascii: "\"")]
            if test { JSONOutput.appendRaw(#","test":true"#, to: &closing) }
            if let correctionOf {
                JSONOutput.appendRaw(#","correctionOf":""#, to: &closing)
                Self.escaped(correctionOf.utf8, &closing)
                closing.append(UInt8(ascii: "\""))
            }
            if !fallbacks.isEmpty {
                JSONOutput.appendRaw(#","fallbacks":["#, to: &closing)
                for (position, name) in fallbacks.enumerated() {
                    if position > 0 { closing.append(UInt8(ascii: ",")) }
                    closing.append(UInt8(ascii: "\""))
                    Self.escaped(name.utf8, &closing)
                    closing.append(UInt8(ascii: "\""))
                }
                closing.append(UInt8(ascii: "]"))
            }
            closing.append(UInt8(ascii: "}"))
            self.closing = closing
            var opening: [UInt8] = [UInt8(ascii: "{")]
            if !hub.isDefault {
                JSONOutput.appendRaw(#""hub":""#, to: &opening)
                Self.escaped(hub.rawValue.utf8, &opening)
                JSONOutput.appendRaw(#"","#, to: &opening)
            }
            JSONOutput.appendRaw(#""deliveryId":""#, to: &opening)
            Self.escaped(eventId.utf8, &opening)
            opening.append(UInt8(ascii: "/"))

            var idTail: [UInt8] = [UInt8(ascii: "/")]
            Self.escaped(templateName.utf8, &idTail)
            JSONOutput.appendRaw(#"","eventId":""#, to: &idTail)
            Self.escaped(eventId.utf8, &idTail)
            JSONOutput.appendRaw(#"","registrationId":""#, to: &idTail)

            var platformPart: [UInt8] = []
            JSONOutput.appendRaw(#"","platform":""#, to: &platformPart)
            Self.escaped(platform.rawValue.utf8, &platformPart)
            JSONOutput.appendRaw(#"","handle":""#, to: &platformPart)

            var tail: [UInt8] = []
            JSONOutput.appendRaw(#"","template":""#, to: &tail)
            Self.escaped(templateName.utf8, &tail)
            JSONOutput.appendRaw(#"","payload":""#, to: &tail)
            Self.escaped(payload, &tail)
            JSONOutput.appendRaw(#"","headers":{"#, to: &tail)
            for (position, field) in headers.fields.enumerated() {
                if position > 0 { tail.append(UInt8(ascii: ",")) }
                tail.append(UInt8(ascii: "\""))
                Self.escaped(field.name.utf8, &tail)
                JSONOutput.appendRaw(#"":""#, to: &tail)
                Self.escaped(field.value.utf8, &tail)
                tail.append(UInt8(ascii: "\""))
            }
            JSONOutput.appendRaw(#"},"expiresAt":"#, to: &tail)
            Self.timestamp(expiresAt, .secondsWhenExact, &tail)
            JSONOutput.appendRaw(#","publishedAt":"#, to: &tail)
            Self.timestamp(publishedAt, .milliseconds, &tail)
            JSONOutput.appendRaw(#","renderedAt":""#, to: &tail)
            parts = opening + idTail + platformPart + tail
            openingEnd = opening.count
            afterRegistrationInIdEnd = openingEnd + idTail.count
            afterRegistrationIdEnd = afterRegistrationInIdEnd + platformPart.count
        }

        /// Appends one record. `renderedAt` is the formatted instant (millisecond precision),
        /// which the fan-out formats once per page of recipients.
        @inline(__always)
        public func write(
            registrationId: some Collection<UInt8>, handle: some Collection<UInt8>, renderedAt: [UInt8], into bytes: inout [UInt8]
        ) {
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
            bytes.append(contentsOf: closing)
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
                JSONOutput.appendRaw("null", to: &bytes)
                return
            }
            bytes.append(UInt8(ascii: "\""))
            ISO8601Timestamp.append(date, precision: precision, to: &bytes)
            bytes.append(UInt8(ascii: "\""))
        }
    }
}
