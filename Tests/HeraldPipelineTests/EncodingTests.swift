import Foundation
import HeraldDomain
import HeraldKafka
@testable import HeraldPipeline
import HeraldRegistry
import Testing
import HeraldStreams

enum KafkaMessageFixture {
    static func make(_ topic: String, _ partition: Int32, _ offset: Int64, key: String? = nil, value: [UInt8]? = nil) -> KafkaMessage {
        KafkaMessage(topic: topic, partition: partition, offset: offset, key: key.map { Array($0.utf8) }, value: value)
    }
}

@Suite("Record encoding")
struct EncodingTests {
    static let awkward = ["plain", "quote \" and \\ backslash", "new\nline\ttab\u{01}", "峰会结束 🎉", ""]

    @Test(arguments: awkward)
    func renditionWritesTheSameBytesAsTheDomainEncoder(text: String) throws {
        let publishedAt = Date(timeIntervalSince1970: 1_795_000_000.120)
        let renderedAt = Date(timeIntervalSince1970: 1_795_000_000.131)
        let expiresAt = Date(timeIntervalSince1970: 1_795_003_600)
        let headers: DeliveryHeaders = ["apns-push-type": "alert", "apns-priority": "10", "x-\(text.isEmpty ? "e" : "k")": text]
        let record = DeliveryRecord(
            eventId: "bn-1", registrationId: "reg:\(text.count)", platform: .apns, handle: "h\(text)",
            template: "news", payload: #"{"aps":{"alert":"\#(text)"}}"#, headers: headers,
            expiresAt: expiresAt, publishedAt: publishedAt, renderedAt: renderedAt
        )
        let rendition = DeliveryRendition(
            eventId: record.eventId, platform: .apns, templateName: record.template, payload: Array(record.payload.utf8),
            headers: headers, expiresAt: expiresAt, publishedAt: publishedAt
        )
        var renderedAtText: [UInt8] = []
        ISO8601Timestamp.append(renderedAt, precision: .milliseconds, to: &renderedAtText)
        var bytes: [UInt8] = []
        rendition.write(
            registrationId: Array(record.registrationId.utf8), handle: Array(record.handle.utf8), renderedAt: renderedAtText, into: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == String(decoding: record.encoded(), as: UTF8.self))
        #expect(try DeliveryRecord.decode(bytes) == record)
    }

    @Test func viewFieldsFindEveryPartOfTheLayoutLine() {
        let view = RegistrationView(
            platform: "fcm", expiresAtEpochSeconds: 1_800_000_000, templateName: "newsFrench", templateKey: "abc123",
            tags: ["World", "$UserId:{alice}"], handle: "tok|en")
        let bytes = Array(view.encoded.utf8)
        let fields = ViewFields(bytes)
        #expect(fields != nil)
        guard let fields else { return }
        #expect(String(decoding: bytes[fields.platform], as: UTF8.self) == "fcm")
        #expect(fields.expiresAt(in: bytes) == 1_800_000_000)
        #expect(String(decoding: bytes[fields.templateName], as: UTF8.self) == "newsFrench")
        #expect(String(decoding: bytes[fields.templateKey], as: UTF8.self) == "abc123")
        #expect(String(decoding: bytes[fields.tags], as: UTF8.self) == "World,$UserId:{alice}")
        #expect(String(decoding: bytes[fields.handle], as: UTF8.self) == "tok|en")
        #expect(RegistrationView(bytes: bytes) == view)
    }

    @Test(arguments: ["", "2|apns||||h", "1|apns||||x|h", "2|apns|x", "garbage"])
    func unreadableViewsAreRefused(text: String) {
        #expect(ViewFields(Array(text.utf8)) == nil)
    }

    @Test("an event record with a member events do not have is dead-lettered as unknown_field, naming the member")
    func unknownMemberDeadLetterReason() throws {
        let original = Array(#"{"id":"bn-10","tags":"World &&","dryRun":true}"#.utf8)
        let message = KafkaMessage(topic: "herald.events", partition: 0, offset: 7, key: nil, value: original)
        let failure = try #require(
            {
                do throws(ValidationFailure) {
                    _ = try NotificationEvent.decode(original)
                    return nil
                } catch { return error }
            }() as ValidationFailure?)
        let letter = DeadLetter(failure: failure, message: message, now: Date())
        #expect(letter.reason == "unknown_field")
        #expect(letter.issues.first?.field == "dryRun")
        #expect(letter.issues.contains { $0.field == "tags" }, "the other problems are listed too")
    }

    @Test func deadLetterEnvelopeCarriesTheOriginalBytesAndSource() throws {
        let original: [UInt8] = Array(#"{"id":"bn-9","tags":"a &&"}"#.utf8) + [0xFF]
        let message = KafkaMessage(topic: "herald.events", partition: 2, offset: 41, key: Array("k".utf8), value: original)
        let failure = ValidationFailure(issues: [ValidationIssue(field: "tags", code: "invalid_tag_expression", message: "expected tag")])
        let letter = DeadLetter(failure: failure, message: message, now: Date())
        let envelope = try JSONValue.parse(letter.envelope())
        #expect(envelope["reason"] == .string("invalid_tag_expression"))
        #expect(envelope["source"]?["partition"] == .number("2"))
        #expect(envelope["source"]?["offset"] == .number("41"))
        guard case .string(let base64)? = envelope["originalBase64"] else {
            Issue.record("no originalBase64 in \(envelope)")
            return
        }
        #expect(Data(base64Encoded: base64).map(Array.init) == original)
        #expect(letter.outgoing(topic: "dlq").headers.contains(KafkaHeader(key: DeadLetter.reasonHeader, value: "invalid_tag_expression")))
    }

    @Test func tailFilterMatchesStatusKeysAndDeliveryBodies() {
        var tail = RecordTail(topic: "t", bootstrapServers: "x")
        tail.eventId = "bn-1"
        #expect(tail.matches(KafkaMessageFixture.make("t", 0, 0, key: "bn-1")))
        #expect(
            tail.matches(
                KafkaMessageFixture.make(
                    "t", 0, 0, key: "r", value: Array(#"{"deliveryId":"x","eventId":"bn-1","registrationId":"r"}"#.utf8))))
        #expect(!tail.matches(KafkaMessageFixture.make("t", 0, 0, key: "r", value: Array(#"{"eventId":"bn-10"}"#.utf8))))
    }

    @Test("page ids stored flat read back whole, and stay reusable after removeAll")
    func flatByteStringsRoundTrip() {
        var strings = FlatByteStrings()
        let ids = ["r1", "", "installation-7:news", "é/ü"]
        for _ in 0..<2 {
            strings.removeAll(keepingCapacity: true)
            for id in ids { Array(id.utf8).withUnsafeBytes { strings.append($0) } }
            #expect(strings.count == ids.count)
            #expect(strings.indices.map { String(decoding: strings[$0], as: UTF8.self) } == ids)
            #expect(strings.withBytes(at: 2) { Array($0) } == Array("installation-7:news".utf8))
        }
    }

    @Test(arguments: [
        ("0", 0 as UInt64?), ("1234567", 1_234_567), ("18446744073709551615", UInt64.max), ("18446744073709551616", nil), ("", nil),
        ("12a", nil), ("-1", nil),
    ])
    func redisCursorsParseAsDecimal(text: String, expected: UInt64?) {
        #expect(Array(text.utf8).withUnsafeBytes { UInt64(decimal: $0) } == expected)
    }
}

/// A lane writes one partition, and librdkafka sends an idempotent producer's partition one
/// request at a time; with more than two batches queued, the lanes' broker threads woke 0.7
/// times per delivery in the bench's 1M broadcast, and under two, 0.06 (docs/decisions/lane-producer.md).
/// librdkafka's statistics in a bench run show the effect; this checks the setting.
@Suite("Delivery producer settings")
struct DeliveryProducerTests {
    @Test("the delivery producer queues more than one batch and less than two")
    func queueHoldsBetweenOneAndTwoBatches() {
        let configuration = PipelineConfiguration()
        let producer = configuration.deliveryProducerConfiguration(clientId: "lane", transactionalId: "lane-0")
        let capBytes = producer.queueBufferingMaxKbytes * 1_024
        #expect(capBytes > producer.batchSize)
        #expect(capBytes < 2 * producer.batchSize)
        let properties = producer.librdkafkaProperties()
        #expect(properties["queue.buffering.max.kbytes"] == String(configuration.deliveryQueueMaxKbytes))
        #expect(properties["batch.size"] == String(configuration.deliveryBatchSize))
    }
}
