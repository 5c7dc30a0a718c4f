import Foundation
import Testing
@testable import HeraldDomain

@Suite("Corrections")
struct EventCorrectionTests {
    static let now = ModelFixtures.date("2026-11-21T18:30:00Z")

    static func issues(_ json: String) -> [ValidationIssue] {
        do {
            _ = try CorrectionRequest.decode(ModelFixtures.bytes(json))
            return []
        } catch {
            return error.issues
        }
    }

    @Test("a request carries new text or a withdrawal, with who and why")
    func requests() throws {
        let text = try CorrectionRequest.decode(
            ModelFixtures.bytes(#"{"properties":{"News_English":"Summit ends without agreement"},"by":"desk","reason":"wrong outcome"}"#))
        #expect(text.properties == ["News_English": "Summit ends without agreement"])
        #expect(!text.withdraw && text.by == "desk" && text.reason == "wrong outcome")
        let withdrawal = try CorrectionRequest.decode(ModelFixtures.bytes(#"{"withdraw":true}"#))
        #expect(withdrawal.withdraw && withdrawal.properties.isEmpty)
        let native = try CorrectionRequest.decode(ModelFixtures.bytes(#"{"native":{"apns":{"aps":{"alert":"fixed"}}}}"#))
        #expect(native.native[.apns] == #"{"aps":{"alert":"fixed"}}"#)
    }

    @Test("a request with nothing to correct, both text and a withdrawal, or an unknown member is refused, naming the field")
    func refusals() {
        #expect(Self.issues("{}").map(\.field) == ["properties"])
        #expect(Self.issues(#"{"withdraw":true,"properties":{"a":"b"}}"#).map(\.field) == ["withdraw"])
        #expect(Self.issues(#"{"properties":{"a":"b"},"tags":"World"}"#).map(\.field) == ["tags"])
        #expect(Self.issues(#"{"withdraw":"yes"}"#).map(\.field).contains("correction.withdraw"))
        let long = String(repeating: "x", count: EventCorrection.maxTextBytes + 1)
        #expect(Self.issues(#"{"withdraw":true,"reason":"\#(long)"}"#).map(\.code) == [ValidationIssue.Code.tooLarge])
        #expect(Self.issues(#"{"withdraw":true,"by":"a\u0007b"}"#).map(\.code) == [ValidationIssue.Code.invalidValue])
    }

    @Test("the correction is the original with the new text over the old, breaking, now, without schedule or an expiry already past")
    func correctionOfTheOriginal() throws {
        var original = try NotificationEvent.decode(ModelFixtures.bytes(ModelFixtures.contractEvent))
        original.expiresAt = ModelFixtures.date("2026-11-21T18:00:00Z")
        original.schedule = .at(ModelFixtures.date("2026-11-21T17:00:00Z"))
        let request = CorrectionRequest(properties: ["News_English": "fixed"], reason: "typo")
        let correction = request.correction(of: original, caller: "newsdesk", now: Self.now)
        #expect(correction.id == original.id)
        #expect(correction.properties["News_English"] == "fixed")
        #expect(correction.properties.count == original.properties.count)
        #expect(correction.urgency == .breaking && correction.schedule == nil && correction.expiresAt == nil)
        #expect(correction.publishedAt == Self.now)
        #expect(
            correction.correction == EventCorrection(withdraw: false, by: "newsdesk", reason: "typo", changed: ["properties.News_English"]))
        #expect(correction.replaceKey == original.replaceKey)
        // It travels as an event: its JSON decodes back to it.
        #expect(try NotificationEvent.decode(correction.canonicalJSON()) == correction)
    }

    @Test("an event with a correction needs an id, and no schedule, test recipients or Live Activity")
    func correctionEventRules() {
        func fields(_ json: String) -> [String] {
            do {
                _ = try NotificationEvent.decode(ModelFixtures.bytes(json))
                return []
            } catch {
                return error.issues.map(\.field)
            }
        }
        #expect(fields(#"{"id":"bn-1","properties":{"a":"b"},"correction":{"by":"desk"}}"#) == [])
        #expect(fields(#"{"properties":{"a":"b"},"correction":{}}"#) == ["id"])
        #expect(fields(#"{"id":"bn-1","properties":{"a":"b"},"testRecipients":["r1"],"correction":{}}"#) == ["correction"])
        #expect(fields(#"{"id":"bn-1","properties":{"a":"b"},"sendAt":"2030-01-01T00:00:00Z","correction":{}}"#) == ["correction"])
        #expect(fields(#"{"id":"bn-1","properties":{"a":"b"},"correction":{"who":"x"}}"#) == ["correction.who"])
    }

    @Test("the replace key is the collapse id, else the event id")
    func replaceKey() {
        #expect(NotificationEvent(id: "bn-1").replaceKey == "bn-1")
        #expect(NotificationEvent(id: "bn-1", collapseId: "summit").replaceKey == "summit")
    }

    @Test("a withdrawal is silent on every platform and names the replace key")
    func withdrawalPayloads() throws {
        for platform in Platform.allCases {
            let payload = String(decoding: EventCorrection.withdrawalPayload(platform: platform, replaceKey: "bn-1"), as: UTF8.self)
            #expect(payload.contains("bn-1"), "\(platform)")
            #expect(!payload.contains("alert"), "\(platform)")
            _ = try JSONValue.parse(payload)
        }
        #expect(
            String(decoding: EventCorrection.withdrawalPayload(platform: .apns, replaceKey: "k"), as: UTF8.self)
                == #"{"aps":{"content-available":1},"herald":{"withdraw":"k"}}"#)
        #expect(EventCorrection.withdrawalHeaders(platform: .apns) == ["apns-push-type": "background"])
    }

    @Test("a correction's id names the event it corrects; its deliveries say so")
    func idsAndRecords() throws {
        let id = DerivedSend.correction.eventId(of: "bn-1", partition: 2, offset: 40)
        #expect(id == "bn-1~correction-2-40")
        #expect(DerivedSend.parse(id)?.kind == .correction && DerivedSend.parse(id)?.eventId == "bn-1")
        var record = try DeliveryRecord.decode(ModelFixtures.bytes(ModelFixtures.contractDelivery))
        record.correctionOf = "bn-1"
        let json = String(decoding: record.encoded(), as: UTF8.self)
        #expect(json.hasSuffix(#","correctionOf":"bn-1"}"#))
        #expect(try DeliveryRecord.decode(record.encoded()) == record)
        #expect(try JSONDecoder().decode(DeliveryRecord.self, from: Data(record.encoded())) == record)
        let status = StatusRecord(eventId: id, state: .completed, tasks: .init(planned: 1), timings: .init(acceptedAt: Self.now))
        #expect(status.correctionOf == "bn-1")
        #expect(String(decoding: try JSONEncoder().encode(status), as: UTF8.self).contains(#""correctionOf":"bn-1""#))
    }
}
