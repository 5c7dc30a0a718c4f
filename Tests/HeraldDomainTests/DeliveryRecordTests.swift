import Foundation
import PropertyBased
import Testing
@testable import HeraldDomain

@Suite("Delivery records")
struct DeliveryRecordTests {
    static let contractRecord = DeliveryRecord(
        eventId: "bn-2026-11-21-0001", registrationId: "7f3c2a", platform: .apns, handle: "a1b2c3...",
        template: "newsTemplate",
        payload: #"{"aps":{"alert":"Fin du sommet"},"inAppMessage":"Fin du sommet"}"#,
        headers: ["apns-push-type": "alert", "apns-priority": "10", "apns-collapse-id": "summit"],
        expiresAt: ModelFixtures.date("2026-11-21T19:00:00Z"),
        publishedAt: ModelFixtures.date("2026-11-21T18:00:00.120Z"),
        renderedAt: ModelFixtures.date("2026-11-21T18:00:00.131Z")
    )

    @Test("the fast encoder writes the contract example byte for byte")
    func matchesContract() throws {
        let encoded = String(decoding: Self.contractRecord.encoded(), as: UTF8.self)
        #expect(encoded == (try ModelFixtures.minified(ModelFixtures.contractDelivery)))
    }

    @Test("the contract example decodes, with Codable and with the order-keeping decoder")
    func decodesContract() throws {
        let viaCodable = try JSONDecoder().decode(DeliveryRecord.self, from: Data(ModelFixtures.contractDelivery.utf8))
        #expect(viaCodable == Self.contractRecord)
        #expect(viaCodable.deliveryId == "bn-2026-11-21-0001/7f3c2a/newsTemplate")
        let ordered = try DeliveryRecord.decode(ModelFixtures.bytes(ModelFixtures.contractDelivery))
        #expect(ordered.headers.fields.map(\.name) == ["apns-push-type", "apns-priority", "apns-collapse-id"])
        #expect(ordered.encoded() == Self.contractRecord.encoded())
    }

    @Test("a deliveryId that does not match its parts is refused")
    func inconsistentId() {
        let text = ModelFixtures.contractDelivery.replacingOccurrences(of: "0001/7f3c2a/newsTemplate", with: "0001/other/newsTemplate")
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(DeliveryRecord.self, from: Data(text.utf8)) }
        #expect(throws: ValidationFailure.self) { try DeliveryRecord.decode(ModelFixtures.bytes(text)) }
    }

    @Test("native deliveries use $native and unset instants are null")
    func nativeAndNulls() throws {
        let record = DeliveryRecord(
            eventId: "e1", registrationId: "r1", platform: .fcm, handle: ModelFixtures.fcmToken,
            template: DeliveryRecord.nativeTemplateName, payload: #"{"message":{}}"#, headers: [:],
            expiresAt: nil, publishedAt: nil, renderedAt: ISO8601Timestamp.date(milliseconds: 1_795_370_400_000)
        )
        let text = String(decoding: record.encoded(), as: UTF8.self)
        #expect(text.hasPrefix(#"{"deliveryId":"e1/r1/$native","#))
        #expect(text.hasSuffix(#""headers":{},"expiresAt":null,"publishedAt":null,"renderedAt":"2026-11-22T18:00:00.000Z"}"#))
        #expect(try DeliveryRecord.decode(record.encoded()) == record)
    }

    @Test(
        "escapes quotes, backslashes and control characters",
        arguments: [
            ("plain", #""plain""#),
            ("say \"hi\"", #""say \"hi\"""#),
            ("back\\slash", #""back\\slash""#),
            ("line\nbreak\ttab\r", #""line\nbreak\ttab\r""#),
            ("\u{0}\u{1F}\u{7F}", #""\u0000\u001f\#u{7F}""#),
            ("\u{8}\u{C}", #""\b\f""#),
            ("峰会 😀", "\"峰会 😀\""),
        ])
    func escaping(input: String, expected: String) {
        var bytes: [UInt8] = []
        JSONOutput.appendString(input, to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == expected)
    }

    /// The escaper skips clean text eight bytes at a time: every ASCII byte at every position
    /// of a 24-byte string, and a multi-byte character next to it, must come out exactly as a
    /// byte-by-byte escaper writes it.
    @Test("escaping eight bytes at a time matches byte-by-byte escaping for every byte at every position")
    func wordAtATimeEscaping() {
        func reference(_ input: [UInt8]) -> [UInt8] {
            var out: [UInt8] = []
            for byte in input {
                switch byte {
                case UInt8(ascii: "\""): out += Array(#"\""#.utf8)
                case UInt8(ascii: "\\"): out += Array(#"\\"#.utf8)
                case 0x0A: out += Array(#"\n"#.utf8)
                case 0x0D: out += Array(#"\r"#.utf8)
                case 0x09: out += Array(#"\t"#.utf8)
                case 0x08: out += Array(#"\b"#.utf8)
                case 0x0C: out += Array(#"\f"#.utf8)
                case ..<0x20: out += Array(String(format: "\\u%04x", Int(byte)).utf8)
                default: out.append(byte)
                }
            }
            return out
        }
        var mismatches: [String] = []
        for length in [8, 15, 16, 24] {
            for position in 0..<length {
                for value in UInt8(0)...UInt8(0x7F) {
                    var input = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    // "é" (bytes >= 0x80) in the last word of the longer strings.
                    if length >= 16 { input.replaceSubrange((length - 2)..<length, with: Array("é".utf8)) }
                    input[position] = value
                    var bytes: [UInt8] = []
                    input.withUnsafeBufferPointer { JSONEscaping.append($0, to: &bytes) }
                    if bytes != reference(input) { mismatches.append("length \(length) byte \(value) at \(position)") }
                }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
    }

    @Test("fast encoding decodes back equal for arbitrary strings")
    func arbitraryRoundTrip() async {
        let strings = ModelGenerators.anyString
        await propertyCheck(count: 200, input: strings, strings, strings, strings, Gen.int64(in: 0...4_102_444_800_000)) {
            payload, handle, headerValue, templateName, milliseconds in
            let record = DeliveryRecord(
                eventId: "e-1", registrationId: "r:1", platform: .webpush, handle: handle, template: templateName,
                payload: payload, headers: ["TTL": "60", "X-Custom": headerValue],
                expiresAt: ISO8601Timestamp.date(milliseconds: milliseconds), publishedAt: nil,
                renderedAt: ISO8601Timestamp.date(milliseconds: milliseconds / 2)
            )
            let bytes = record.encoded()
            #expect((try? DeliveryRecord.decode(bytes)) == record)
            #expect((try? JSONDecoder().decode(DeliveryRecord.self, from: Data(bytes))) == record)
            #expect((try? JSONSerialization.jsonObject(with: Data(bytes))) != nil)
        }
    }
}

@Suite("empty alerts and the fallbacks a record names")
struct EmptyAlertTests {
    @Test(arguments: [
        (Platform.apns, #"{"aps":{"alert":""}}"#, true),
        (.apns, #"{"aps":{"alert":"  "},"inAppMessage":""}"#, true),
        (.apns, #"{"aps":{"alert":{"title":"","body":""}}}"#, true),
        (.apns, #"{"aps":{"alert":{"title":"","body":"Summit"}}}"#, false),
        (.apns, #"{"aps":{"alert":{"loc-key":"BREAKING","body":""}}}"#, false),
        (.apns, #"{"aps":{"content-available":1},"refresh":""}"#, false),
        (.apns, #"{"aps":{"alert":"Summit"}}"#, false),
        (.fcm, #"{"message":{"notification":{"title":"","body":""}}}"#, true),
        (.fcm, #"{"message":{"notification":{"body":"峰会"}}}"#, false),
        (.fcm, #"{"message":{"data":{"story":""}}}"#, false),
        (.fcm, #"{"message":{"notification":{"title":"","image":"https://x.test/a.png"}}}"#, false),
        (.webpush, #"{"web_push":8030,"notification":{"title":"","body":" "}}"#, true),
        (.webpush, #"{"title":""}"#, false),
        (
            .wns, #"<toast><visual><binding template="ToastText02"><text id="1"></text><text id="2"> </text></binding></visual></toast>"#,
            true
        ),
        (.wns, #"<toast><visual><binding template="ToastText01"><text id="1">Summit</text></binding></visual></toast>"#, false),
        (.wns, #"<toast><visual><binding template="ToastGeneric"><text>Le sommet</text><text/></binding></visual></toast>"#, false),
        (
            .wns, #"<toast><visual><binding template="ToastGeneric"><text></text><text/><textbox>x</textbox></binding></visual></toast>"#,
            true
        ),
        (.wns, #"<toast><visual><binding template="ToastGeneric"><text>"#, false),
        (.wns, #"<toast><text"#, false),
        (.wns, #"<tile><visual><binding template="TileSquareText04"><text id="1"></text></binding></visual></tile>"#, false),
    ])
    func emptyAlerts(_ platform: Platform, _ payload: String, _ empty: Bool) {
        #expect(EmptyAlert.check(platform: platform, payload: Array(payload.utf8)) == empty, "\(payload)")
    }

    @Test func fallbacksRoundTrip() throws {
        let record = DeliveryRecord(
            eventId: "e1", registrationId: "r1", platform: .apns, handle: "ab", template: "newsCanadianFrench",
            payload: #"{"aps":{"alert":"Sommet"}}"#, headers: DeliveryHeaders(), expiresAt: nil, publishedAt: nil,
            renderedAt: Date(timeIntervalSince1970: 1_800_000_000), fallbacks: ["news_en", "news_fr"])
        let bytes = record.encoded()
        #expect(String(decoding: bytes, as: UTF8.self).hasSuffix(#","fallbacks":["news_en","news_fr"]}"#))
        #expect(try DeliveryRecord.decode(bytes) == record)
        #expect(try JSONDecoder().decode(DeliveryRecord.self, from: Data(bytes)) == record)
        var plain = record
        plain.fallbacks = []
        #expect(!String(decoding: plain.encoded(), as: UTF8.self).contains("fallbacks"))
    }

    @Test func alternativesUsedAreNamed() throws {
        let template = try CompiledTemplate.compile(
            #"{"aps":{"alert":{"title":"$(Head_fr | Head_en)","body":"$(News_fr_CA | News_fr | News_en)"}},"x":"$(a)"}"#, format: .json)
        #expect(template.referencedProperties == ["head_fr", "head_en", "news_fr_ca", "news_fr", "news_en", "a"])
        #expect(template.alternativesUsed(TemplateProperties(["News_FR": "Sommet", "Head_en": "Breaking"])) == ["head_en", "news_fr"])
        #expect(template.alternativesUsed(TemplateProperties(["News_fr_CA": "x", "Head_fr": "y"])) == [])
    }
}
