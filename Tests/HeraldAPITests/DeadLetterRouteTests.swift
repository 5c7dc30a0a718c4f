import Foundation
import HTTPTypes
import HeraldAPI
import HeraldDomain
import Testing

@Suite("Dead letters over the API: listed per hub with their reasons, replayed as a send")
struct DeadLetterRouteTests {
    /// A dead letter's envelope as the planner writes it (`DeadLetter.envelope`).
    static func envelope(reason: String, original: String?, truncated: Bool = false, topic: String = "herald.events") -> String {
        let encoded = original.map { "\"" + Data($0.utf8).base64EncodedString() + "\"" } ?? "null"
        return #"{"reason":"\#(reason)","message":"refused","issues":[{"field":"tags","code":"x","message":"y"}],"eventId":null,"#
            + #""source":{"topic":"\#(topic)","partition":1,"offset":40,"timestamp":null,"key":null},"originalBase64":\#(encoded),"#
            + #""originalBytes":\#(original?.utf8.count ?? 0),"originalTruncated":\#(truncated),"deadLetteredAt":"2026-11-30T10:00:00.000Z"}"#
    }

    @Test("the envelope is read back: reason, fields, source, the original and its hub; anything else is not a dead letter")
    func envelopeIsRead() throws {
        let entry = try #require(
            DeadLetterEntry(
                envelope: Array(Self.envelope(reason: "unknown_hub", original: #"{"hub":"sports","id":"g-1"}"#).utf8), partition: 2,
                offset: 7))
        #expect(entry.reason == "unknown_hub" && entry.fields == ["tags"] && entry.hub == HubName("sports"))
        #expect(entry.sourceTopic == "herald.events" && entry.sourcePartition == 1 && entry.sourceOffset == 40)
        #expect(entry.original.map { String(decoding: $0, as: UTF8.self) } == #"{"hub":"sports","id":"g-1"}"#)
        var text: [UInt8] = []
        entry.json().write(into: &text)
        #expect(String(decoding: text, as: UTF8.self).contains(#""original":"{\"hub\":\"sports\",\"id\":\"g-1\"}""#))
        let unreadable = try #require(
            DeadLetterEntry(envelope: Array(Self.envelope(reason: "malformed_json", original: "{nope").utf8), partition: 0, offset: 1))
        #expect(unreadable.hub == .default)
        #expect(DeadLetterEntry(envelope: Array(#"{"no":"reason"}"#.utf8), partition: 0, offset: 0) == nil)
        #expect(DeadLetterEntry(envelope: Array("not json".utf8), partition: 0, offset: 0) == nil)
    }

    @Test("Manage lists a hub's dead letters, newest first; Send may not; a replay publishes the fixed-upstream event as a send")
    func listAndReplay() async throws {
        var hub = TestHub()
        hub.deadLetters.records = [
            (0, 3, Self.envelope(reason: "unknown_hub", original: #"{"id":"bn-77","properties":{"News_English":"x"}}"#)),
            (0, 4, Self.envelope(reason: "invalid_event", original: #"{"id":"bn-78","tags":""}"#)),
            (1, 9, Self.envelope(reason: "unknown_hub", original: #"{"hub":"sports","id":"g-1"}"#)),
            (0, 5, Self.envelope(reason: "event_too_large", original: "{", truncated: true)),
            (0, 6, Self.envelope(reason: "poison", original: "{}", topic: "herald.tasks")),
        ]
        let publisher = hub.publisher
        try await hub.run { client async throws in
            let list = try await client.call(.get, "/v1/deadletters", TestHub.manage)
            #expect(list.status == .ok, "\(list.text)")
            let letters = try #require(try list.json()["deadLetters"]?.arrayValue)
            #expect(letters.compactMap { $0["offset"]?.intValue } == [6, 5, 4, 3])
            #expect(letters.last?["original"]?.stringValue == #"{"id":"bn-77","properties":{"News_English":"x"}}"#)
            let sports = try await client.call(.get, "/v1/hubs/sports/deadletters?limit=5", TestHub.manage)
            #expect(try sports.json()["deadLetters"]?[0]?["offset"]?.intValue == 9)
            #expect(try await client.call(.get, "/v1/deadletters", TestHub.send).status == .forbidden)
            #expect(try await client.call(.get, "/v1/deadletters?limit=0", TestHub.manage).errorField == "limit")

            let replay = try await client.call(.post, "/v1/deadletters/0/3/replay", TestHub.manage)
            #expect(replay.status == .accepted, "\(replay.text)")
            #expect(try replay.json()["id"]?.stringValue == "bn-77")
            #expect(replay.headers[.location] == "/v1/notifications/bn-77")
            #expect(publisher.last?.event.id == "bn-77")
            let invalid = try await client.call(.post, "/v1/deadletters/0/4/replay", TestHub.manage)
            #expect(invalid.status == .badRequest && invalid.issueFields.contains("tags"), "\(invalid.text)")
            #expect(try await client.call(.post, "/v1/deadletters/0/5/replay", TestHub.manage).errorCode == "not_replayable")
            #expect(try await client.call(.post, "/v1/deadletters/0/6/replay", TestHub.manage).errorCode == "not_replayable")
            #expect(try await client.call(.post, "/v1/deadletters/0/99/replay", TestHub.manage).status == .notFound)
            #expect(try await client.call(.post, "/v1/deadletters/x/3/replay", TestHub.manage).errorField == "partition")
            #expect(try await client.call(.post, "/v1/deadletters/1/9/replay", TestHub.manage).status == .notFound, "another hub's")
            #expect(publisher.count == 1)
        }
    }
}
