import Foundation
import HeraldDomain
import HeraldPipeline
import HeraldRedis
import HeraldRegistry
import HeraldTestSupport
import Testing

@Suite("Localization and rendering", .heavy, .serialized)
struct LocalizationTests {
    @Test func eachDeviceGetsItsOwnLanguageNativeOrCategoryPayload() async throws {
        try await withPipelineHarness(slots: 8) { harness in
            let invite = RegistrationTemplate(
                name: "invite", body: #"{"aps":{"alert":"$(inviteMessage)","category":"INVITE_CATEGORY"}}"#,
                headers: ["apns-push-type": "alert"]
            )
            // A locale's fallbacks: Canadian French, else French, else English.
            let canadian = RegistrationTemplate(
                name: "newsCanadianFrench", body: #"{"aps":{"alert":"$(News_French_CA | News_French | News_English)"}}"#)
            try await harness.seed([
                testRegistration("en", tags: ["World"], language: "English"),
                testRegistration("fr", tags: ["World"], language: "French"),
                testRegistration("zh", platform: .fcm, tags: ["World"], language: "Mandarin"),
                testRegistration("kl", tags: ["World"], language: "Klingon"),
                testRegistration("native-apns", tags: ["World"], language: nil),
                testRegistration("native-fcm", platform: .fcm, tags: ["World"], language: nil),
                Registration(
                    registrationId: "inv", platform: .apns, handle: String(repeating: "cd", count: 32), tags: ["World"], template: invite,
                    version: 1),
                Registration(
                    registrationId: "ca", platform: .apns, handle: String(repeating: "ce", count: 32), tags: ["World"],
                    template: canadian, version: 1),
                testRegistration("sports", tags: ["Sports"], language: "English"),
            ])
            // A registration whose expiry passed after it was indexed (the sweep has not run yet).
            let layout = harness.configuration.layout
            let slot = layout.slot(of: "stale")
            let connection = try await RedisConnection.connect(configuration: harness.configuration.redis)
            let field = SlotLayout.packField(SlotLayout.pack(ofPosition: 900))
            var pack = try await connection.send(RedisCommand("HGET", layout.packsKey(slot: slot), field)).bytes ?? []
            let staleView = RegistrationView(
                platform: "apns", expiresAtEpochSeconds: 1_000, templateName: "", templateKey: "", tags: ["World"], handle: "ff")
            ViewPack.append(position: 900, id: "stale".utf8, view: staleView.encoded.utf8, to: &pack)
            _ = try await connection.pipeline([
                RedisCommand("HSET", layout.packsKey(slot: slot), field, pack),
                RedisCommand("HSET", layout.positionsKey(slot: slot), "stale", "900"),
                RedisCommand("SETBIT", layout.liveKey(slot: slot), "900", "1"),
                RedisCommand("SADD", layout.allKey(slot: slot), "stale"),
                RedisCommand("SADD", layout.tagKey(slot: slot, tag: "World"), "stale"),
            ])
            connection.close()
            harness.startRoles()

            let published = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 * 1000).rounded() / 1000)
            let expiresAt = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + 3_600).rounded())
            let summit = NotificationEvent(
                id: "loc-1", audience: .expression(.tag("World"), source: "World"),
                properties: [
                    "News_English": "Summit ends", "News_French": "Fin du sommet", "News_Mandarin": "峰会结束", "inviteMessage": "Join \"us\"",
                ],
                native: [.apns: #"{"aps":{"alert":"Summit ends"}}"#], expiresAt: expiresAt, priority: .high, collapseId: "summit",
                publishedAt: published
            )
            _ = try await harness.publish(summit)
            var filtered = summit
            filtered.id = "loc-2"
            filtered.templates = ["newsFrench"]
            _ = try await harness.publish(filtered)
            var englishOnly = summit
            englishOnly.id = "loc-3"
            englishOnly.properties = ["News_English": "Summit ends"]
            englishOnly.native = [:]
            _ = try await harness.publish(englishOnly)

            let status = try await harness.finalStatus("loc-1")
            let filteredStatus = try await harness.finalStatus("loc-2")
            let englishStatus = try await harness.finalStatus("loc-3")
            try await harness.stopRoles()

            let records = try await harness.deliveries(eventId: "loc-1")
            let byId = Dictionary(records.map { ($0.registrationId, $0) }, uniquingKeysWith: { first, _ in first })
            #expect(Set(byId.keys) == ["en", "fr", "zh", "native-apns", "inv", "ca"])
            #expect(records.count == 6)
            #expect(byId["en"]?.payload == #"{"aps":{"alert":"Summit ends"},"inAppMessage":"Summit ends"}"#)
            #expect(byId["fr"]?.payload == #"{"aps":{"alert":"Fin du sommet"},"inAppMessage":"Fin du sommet"}"#)
            #expect(byId["zh"]?.payload == #"{"message":{"notification":{"body":"峰会结束"}}}"#)
            // A property the event does not carry renders as "" (Azure's rule); an alert left with
            // no text at all is not pushed (Klingon: skipped as empty_alert).
            #expect(byId["kl"] == nil)
            // The chain's first link the event has, named on the record.
            #expect(byId["ca"]?.payload == #"{"aps":{"alert":"Fin du sommet"}}"#)
            #expect(byId["ca"]?.fallbacks == ["news_french"] && byId["en"]?.fallbacks == [])
            #expect(byId["native-apns"]?.payload == #"{"aps":{"alert":"Summit ends"}}"#)
            #expect(byId["native-apns"]?.template == DeliveryRecord.nativeTemplateName)
            #expect(byId["inv"]?.payload == #"{"aps":{"alert":"Join \"us\"","category":"INVITE_CATEGORY"}}"#)

            let en = try #require(byId["en"])
            #expect(en.deliveryId == "loc-1/en/newsEnglish")
            #expect(en.headers["apns-priority"] == "10")
            #expect(en.headers["apns-collapse-id"] == "summit")
            #expect(en.headers["apns-push-type"] == "alert")
            #expect(en.headers["apns-expiration"] == String(Int64(expiresAt.timeIntervalSince1970)))
            #expect(en.publishedAt == published)
            #expect(en.expiresAt == expiresAt)
            #expect(en.renderedAt >= published)
            #expect(byId["zh"]?.headers["fcm-priority"] == "high")
            #expect(byId["zh"]?.headers["fcm-collapse-key"] == "summit")

            #expect(status.state == .completed)
            #expect(status.targets.total == 6)
            #expect(status.targets.byPlatform == ["apns": 5, "fcm": 1])
            #expect(status.targets.byTemplate["newsEnglish"] == 1)
            #expect(status.targets.byTemplate[DeliveryRecord.nativeTemplateName] == 1)
            // native-fcm (no fcm payload in the event), the expired registration, Klingon's empty alert.
            #expect(status.skipped == 3)
            #expect(status.skippedReasons?["empty_alert"] == 1, "\(String(describing: status.skippedReasons))")
            #expect(status.failed == 0)

            // `templates` restricts template registrations only; native ones still receive.
            let filteredIds = Set(try await harness.deliveries(eventId: "loc-2").map(\.registrationId))
            #expect(filteredIds == ["fr", "native-apns"])
            #expect(filteredStatus.skipped == 7)

            // Only English: the chain falls through to it; every alert left empty is skipped
            // (French, Mandarin, Klingon, the invite), never pushed.
            let english = Dictionary(
                try await harness.deliveries(eventId: "loc-3").map { ($0.registrationId, $0) }, uniquingKeysWith: { first, _ in first })
            #expect(Set(english.keys) == ["en", "ca"])
            #expect(english["ca"]?.payload == #"{"aps":{"alert":"Summit ends"}}"# && english["ca"]?.fallbacks == ["news_english"])
            #expect(englishStatus.skippedReasons?["empty_alert"] == 4, "\(String(describing: englishStatus.skippedReasons))")
        }
    }

    @Test("an audience spread over many templates: each device gets its own, task after task and event after event")
    func manyTemplates() async throws {
        // More templates than a task compares one by one (8), on few slots so that tasks share
        // them, and two events in a row so the second meets the lane's renditions of the first.
        try await withPipelineHarness(slots: 4) { harness in
            let editions = 30
            let registrations = (0..<(editions * 3)).map { index in
                Registration(
                    registrationId: "m\(index)", platform: index % 2 == 0 ? .apns : .fcm,
                    handle: String(format: "%064x", index), tags: ["World"],
                    template: RegistrationTemplate(
                        name: "edition", body: #"{"aps":{"alert":"$(headline)"},"edition":"\#(index % editions)"}"#), version: 1)
            }
            try await harness.seed(registrations)
            harness.startRoles()
            for (id, headline) in [("many-1", "First"), ("many-2", "Second")] {
                let event = NotificationEvent(
                    id: id, audience: .expression(.tag("World"), source: "World"), properties: ["headline": headline], native: [:])
                _ = try await harness.publish(event)
                let status = try await harness.finalStatus(id)
                #expect(status.targets.total == registrations.count)
                let records = try await harness.deliveries(eventId: id)
                #expect(records.count == registrations.count)
                for record in records {
                    let index = Int(record.registrationId.dropFirst())!
                    #expect(
                        record.payload == #"{"aps":{"alert":"\#(headline)"},"edition":"\#(index % editions)"}"#, "\(record.registrationId)")
                    #expect(record.platform == (index % 2 == 0 ? .apns : .fcm))
                }
            }
            try await harness.stopRoles()
        }
    }
}
