import Foundation
import HeraldDomain
import Testing

@Suite("Hubs: names, record keys and the hub member of every record")
struct HubNameTests {
    static let sports = HubName("sports")!

    @Test(arguments: ["sports", "news-app", "news_app.eu", "A1", String(repeating: "h", count: 260)])
    func azureHubNamesAreAccepted(_ name: String) {
        #expect(HubName(name)?.rawValue == name.lowercased())
        #expect(HubName.problem(name) == nil)
    }

    @Test(arguments: [
        ("", "empty"), ("-news", "starts and ends"), ("news.", "starts and ends"), ("news/app", "'/' at position 5"),
        ("news app", "position 5"), ("café", "position 4"), (String(repeating: "h", count: 261), "at most 260"),
    ])
    func otherNamesAreRefusedWithTheReason(_ name: String, _ reason: String) {
        #expect(HubName(name) == nil)
        #expect(HubName.problem(name)?.contains(reason) == true, "\(HubName.problem(name) ?? "accepted")")
    }

    @Test func namesAreCaseInsensitive() {
        #expect(HubName("Sports") == HubName("sports"))
        #expect(HubName("DEFAULT")?.isDefault == true)
    }

    @Test func recordKeysNameTheHubOutsideTheDefault() {
        #expect(HubName.default.recordKey("r1") == "r1")
        #expect(Self.sports.recordKey("r1") == "sports/r1")
        #expect(Self.sports.recordKey("$installation:i1") == "sports/$installation:i1")
        #expect(HubName.split(recordKey: "sports/r1")?.hub == Self.sports)
        #expect(HubName.split(recordKey: "sports/r1")?.id == "r1")
        #expect(HubName.split(recordKey: "r1:tpl")?.hub == .default)
        #expect(HubName.split(recordKey: "-bad/r1") == nil)
    }

    @Test func defaultHubRecordsKeepTheirBytesAndOtherHubsNameTheirs() throws {
        let registration = Registration(registrationId: "r1", platform: .fcm, handle: "tok", tags: ["A"], version: 3)
        #expect(!String(decoding: registration.jsonBytes(), as: UTF8.self).contains("hub"))
        var sportsRegistration = registration
        sportsRegistration.hub = Self.sports
        let text = String(decoding: sportsRegistration.jsonBytes(), as: UTF8.self)
        #expect(text.hasPrefix(#"{"hub":"sports","registrationId":"r1""#))
        #expect(try JSONDecoder().decode(Registration.self, from: Data(text.utf8)) == sportsRegistration)

        var event = NotificationEvent(id: "e1", properties: ["p": "v"])
        #expect(!String(decoding: event.canonicalJSON(), as: UTF8.self).contains("hub"))
        event.hub = Self.sports
        let decoded = try NotificationEvent.decode(event.canonicalJSON())
        #expect(decoded.hub == Self.sports)
        #expect(decoded == event)

        let delivery = DeliveryRecord(
            eventId: "e1", registrationId: "r1", platform: .fcm, handle: "tok", template: "t", payload: "{}", headers: DeliveryHeaders(),
            expiresAt: nil, publishedAt: nil, renderedAt: Date(timeIntervalSince1970: 1_000), hub: Self.sports)
        let deliveryText = String(decoding: delivery.encoded(), as: UTF8.self)
        #expect(deliveryText.hasPrefix(#"{"hub":"sports","deliveryId":"e1/r1/t""#))
        #expect(try DeliveryRecord.decode(delivery.encoded()) == delivery)
        var plain = delivery
        plain.hub = .default
        #expect(String(decoding: plain.encoded(), as: UTF8.self).hasPrefix(#"{"deliveryId":"#))

        let receipt = PushReceipt.noSender(for: delivery, at: Date(timeIntervalSince1970: 2_000))
        #expect(receipt.hub == Self.sports)
        #expect(try JSONDecoder().decode(PushReceipt.self, from: Data(receipt.encoded())) == receipt)

        var status = StatusRecord.accepted(eventId: "e1", taskCount: 1, publishedAt: nil, acceptedAt: Date(timeIntervalSince1970: 0))
        status.hub = Self.sports
        #expect(try JSONDecoder().decode(StatusRecord.self, from: JSONEncoder().encode(status)).hub == Self.sports)
    }

    @Test func documentsNamingABadHubOrAnotherHubAreRefused() throws {
        let event = #"{"hub":"-x","tags":"A","properties":{}}"#
        #expect(throws: ValidationFailure.self) { try NotificationEvent.decode(Array(event.utf8)) }
        do {
            _ = try NotificationEvent.decode(Array(event.utf8))
        } catch {
            #expect(error.issues.map(\.field) == ["hub"])
        }
        let body = #"{"hub":"news","platform":"fcm","handle":"\#(String(repeating: "t", count: 40))"}"#
        do {
            _ = try Registration.decode(Array(body.utf8), registrationId: "r1", hub: Self.sports)
            Issue.record("a registration naming another hub was accepted")
        } catch {
            #expect(error.issues.map(\.field) == ["hub"])
            #expect(error.issues.first?.message.contains(#"names hub "news" but the request is for hub "sports""#) == true)
        }
        let same = #"{"hub":"Sports","platform":"fcm","handle":"\#(String(repeating: "t", count: 40))"}"#
        #expect(try Registration.decode(Array(same.utf8), registrationId: "r1", hub: Self.sports).hub == Self.sports)
    }

    @Test("a hub's limits round-trip through its stored form; each out of its range is refused naming it")
    func limits() throws {
        let name = try #require(HubName("sports"))
        let request =
            #"{"limits":{"sendsPerMinute":60,"maxRegistrations":500,"maxRegistrationsPerHandle":10,"maxTagsPerRegistration":60,"maxPayloadBytes":2048}}"#
        let hub = try HubDefinition.decodeRequest(Array(request.utf8), name: name, current: nil)
        #expect(
            hub.limits
                == HubLimits(
                    sendsPerMinute: 60, maxRegistrations: 500, maxRegistrationsPerHandle: 10, maxTagsPerRegistration: 60,
                    maxPayloadBytes: 2_048))
        #expect(
            hub.limits.summary
                == "sendsPerMinute=60  maxRegistrations=500  maxRegistrationsPerHandle=10  maxTagsPerRegistration=60  maxPayloadBytes=2048")
        #expect(try HubDefinition.decodeStored(hub.jsonBytes()).limits == hub.limits)
        // The platforms' own limits, lowered where the hub's is smaller.
        #expect(PayloadLimits.default.capped(at: 4_500) == PayloadLimits(apns: 4_096, fcm: 4_096, wns: 4_500, webpush: 3_993))
        #expect(PayloadLimits.default.capped(at: nil) == .default)
        let bad = #"{"limits":{"maxRegistrationsPerHandle":0,"maxTagsPerRegistration":-1,"maxDevices":3,"maxPayloadBytes":5121}}"#
        do {
            _ = try HubDefinition.decodeRequest(Array(bad.utf8), name: name, current: nil)
            Issue.record("out-of-range limits were accepted")
        } catch {
            #expect(
                Set(error.issues.map(\.field))
                    == [
                        "limits.maxRegistrationsPerHandle", "limits.maxTagsPerRegistration", "limits.maxDevices", "limits.maxPayloadBytes",
                    ])
        }
    }

    @Test("a hub's frequency caps round-trip, an absent member keeps them and [] removes them; a bad rule is refused naming its member")
    func frequencyCaps() throws {
        let name = try #require(HubName("sports"))
        let request =
            #"{"frequencyCaps":[{"maxAlerts":3,"windowSeconds":86400},{"maxAlerts":1,"windowSeconds":3600,"urgencies":["bulk"]}]}"#
        let hub = try HubDefinition.decodeRequest(Array(request.utf8), name: name, current: nil)
        #expect(
            hub.frequencyCaps == [
                FrequencyCap(maxAlerts: 3, windowSeconds: 86_400), FrequencyCap(maxAlerts: 1, windowSeconds: 3_600, urgencies: [.bulk]),
            ])
        #expect(try HubDefinition.decodeStored(hub.jsonBytes()).frequencyCaps == hub.frequencyCaps)
        #expect(hub.frequencyCaps.map(\.settingText) == ["3/86400", "1/3600:bulk"])
        #expect(hub.frequencyCaps.applying(to: .breaking).isEmpty && hub.frequencyCaps.applying(to: nil).count == 1)
        #expect(hub.frequencyCaps.longestWindowSeconds == 86_400)
        #expect(try HubDefinition.decodeRequest(Array(#"{"limits":{}}"#.utf8), name: name, current: hub).frequencyCaps == hub.frequencyCaps)
        #expect(try HubDefinition.decodeRequest(Array(#"{"frequencyCaps":[]}"#.utf8), name: name, current: hub).frequencyCaps.isEmpty)
        // Breaking alerts in quiet hours: through by default, held when the hub says so, kept by a change that does not name it.
        #expect(!hub.quietHoursHoldBreaking)
        let calm = try HubDefinition.decodeRequest(Array(#"{"quietHoursHoldBreaking":true}"#.utf8), name: name, current: hub)
        #expect(calm.quietHoursHoldBreaking && calm.frequencyCaps == hub.frequencyCaps)
        #expect(try HubDefinition.decodeStored(calm.jsonBytes()).quietHoursHoldBreaking)
        #expect(try HubDefinition.decodeRequest(Array(#"{"limits":{}}"#.utf8), name: name, current: calm).quietHoursHoldBreaking)
        #expect(throws: ValidationFailure.self) {
            try HubDefinition.decodeRequest(Array(#"{"quietHoursHoldBreaking":"yes"}"#.utf8), name: name, current: nil)
        }
        let bad =
            #"{"frequencyCaps":[{"maxAlerts":0,"windowSeconds":10},{"maxAlerts":2,"windowSeconds":3600,"urgencies":["urgent"],"per":"day"},{"windowSeconds":60}]}"#
        do {
            _ = try HubDefinition.decodeRequest(Array(bad.utf8), name: name, current: nil)
            Issue.record("bad frequency caps were accepted")
        } catch {
            #expect(
                Set(error.issues.map(\.field))
                    == [
                        "frequencyCaps[0].maxAlerts", "frequencyCaps[0].windowSeconds", "frequencyCaps[1].urgencies[0]",
                        "frequencyCaps[1].per", "frequencyCaps[2].maxAlerts",
                    ], "\(error.issues)")
        }
        let nine = "[" + Array(repeating: #"{"maxAlerts":1,"windowSeconds":60}"#, count: 9).joined(separator: ",") + "]"
        #expect(throws: ValidationFailure.self) {
            try HubDefinition.decodeRequest(Array(#"{"frequencyCaps":\#(nine)}"#.utf8), name: name, current: nil)
        }
    }

    @Test("frequency caps in their setting form: rules by commas, urgencies by +, every bad rule named")
    func frequencyCapSetting() throws {
        #expect(try FrequencyCap.parseList("").isEmpty)
        #expect(
            try FrequencyCap.parseList("3/86400, 1/3600:bulk+breaking") == [
                FrequencyCap(maxAlerts: 3, windowSeconds: 86_400),
                FrequencyCap(maxAlerts: 1, windowSeconds: 3_600, urgencies: [.breaking, .bulk]),
            ])
        for (text, field) in [
            ("3", "frequencyCaps[0]"), ("3/86400:urgent", "frequencyCaps[0].urgencies"), ("1/60,0/60", "frequencyCaps[1].maxAlerts"),
            ("1/59", "frequencyCaps[0].windowSeconds"),
        ] {
            do {
                _ = try FrequencyCap.parseList(text)
                Issue.record("\(text) was accepted")
            } catch {
                #expect(error.issues.map(\.field) == [field], "\(text): \(error.issues)")
            }
        }
    }

    static let pem =
        "-----BEGIN PRIVATE KEY-----\nTUlHSEFnRUFNQk1HQnlxR1NNNDlBZ0VHQ0NxR1NNNDlBd0VIQkcwd2F3SUJBUVFn\n-----END PRIVATE KEY-----"
    static let credentials = #"""
        {"credentials":{"apns":{"keyId":"ABC123DEFG","teamId":"TEAM123456","topics":["com.example.sports"],"key":"\#(pem.replacingOccurrences(of: "\n", with: "\\n"))","endpoint":"sandbox"},"fcm":{"serviceAccount":{"type":"service_account","project_id":"sports-project","client_email":"sender@sports-project.iam.gserviceaccount.com","private_key":"\#(pem.replacingOccurrences(of: "\n", with: "\\n"))","private_key_id":"k1","auth_uri":"https://accounts.google.com/o/oauth2/auth"}},"webPush":{"privateKey":"c2VjcmV0","subject":"mailto:desk@example.com"},"wns":{"packageSid":"ms-app://s-1-15-2-1","clientSecret":"wns-secret"}}}
        """#

    @Test("a hub's push credentials: stored with their secrets, read without them; a service set to null is removed, an absent one kept")
    func credentials() throws {
        let name = try #require(HubName("sports"))
        let hub = try HubDefinition.decodeRequest(Array(Self.credentials.utf8), name: name, current: nil)
        #expect(
            hub.credentials.apns
                == .init(keyId: "ABC123DEFG", teamId: "TEAM123456", topics: ["com.example.sports"], key: Self.pem, endpoint: "sandbox"))
        #expect(hub.credentials.fcm?.projectId == "sports-project" && hub.credentials.fcm?.privateKeyId == "k1")
        #expect(hub.credentials.webPush?.subject == "mailto:desk@example.com" && hub.credentials.wns?.clientSecret == "wns-secret")
        #expect(Platform.allCases.allSatisfy(hub.credentials.covers))
        #expect(try HubDefinition.decodeStored(hub.jsonBytes()) == hub, "the stored form keeps every secret")
        var read: [UInt8] = []
        hub.redactedJSON.write(into: &read)
        let text = String(decoding: read, as: UTF8.self)
        #expect(text.contains("TEAM123456") && text.contains("sports-project") && text.contains("ms-app://s-1-15-2-1"))
        for secret in ["PRIVATE KEY", "wns-secret", "c2VjcmV0", "private_key\""] {
            #expect(!text.contains(secret), "the read answered \(secret): \(text)")
        }
        // A change of limits keeps the credentials; null removes one service, the others stay.
        let limited = try HubDefinition.decodeRequest(Array(#"{"limits":{"sendsPerMinute":5}}"#.utf8), name: name, current: hub)
        #expect(limited.credentials == hub.credentials)
        let removed = try HubDefinition.decodeRequest(Array(#"{"credentials":{"apns":null,"wns":null}}"#.utf8), name: name, current: hub)
        #expect(removed.credentials.apns == nil && removed.credentials.wns == nil)
        #expect(removed.credentials.fcm == hub.credentials.fcm && removed.credentials.webPush == hub.credentials.webPush)
    }

    @Test("push credentials of the wrong shape are refused, each problem naming its member")
    func credentialsRefused() throws {
        let name = try #require(HubName("sports"))
        let bad = #"""
            {"credentials":{"apns":{"keyId":"short","teamId":"TEAM123456","topics":[],"key":"not a pem","endpoint":"http://plain.example"},"fcm":{"serviceAccount":{"type":"user","project_id":"","client_email":"a@b"}},"webPush":{"subject":"mailto:desk@example.com"},"wns":{"packageSid":"sid","clientSecret":"s","tokenUrl":"ftp://x"},"huawei":{}}}
            """#
        do {
            _ = try HubDefinition.decodeRequest(Array(bad.utf8), name: name, current: nil)
            Issue.record("bad credentials were accepted")
        } catch {
            #expect(
                Set(error.issues.map(\.field)) == [
                    "credentials.huawei", "credentials.apns.keyId", "credentials.apns.topics", "credentials.apns.key",
                    "credentials.apns.endpoint", "credentials.fcm.serviceAccount.type", "credentials.fcm.serviceAccount.project_id",
                    "credentials.fcm.serviceAccount.private_key", "credentials.webPush.privateKey", "credentials.wns.tokenUrl",
                ], "\(error.issues)")
        }
        for body in [#"{"credentials":[]}"#, #"{"credentials":{"apns":"key"}}"#] {
            #expect(throws: ValidationFailure.self) { try HubDefinition.decodeRequest(Array(body.utf8), name: name, current: nil) }
        }
    }
}
