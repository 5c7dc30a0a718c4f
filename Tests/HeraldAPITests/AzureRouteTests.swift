import Foundation
import HTTPTypes
import HeraldAPI
import HeraldDomain
import Hummingbird
import HummingbirdTesting
import Testing

@Suite("Azure Notification Hubs routes: /{hub}/…")
struct AzureRouteTests {
    static func headers(_ fields: [String: String], auth: HTTPFields = TestHub.send) -> HTTPFields {
        var headers = auth
        for (name, value) in fields { headers[HTTPField.Name(name)!] = value }
        return headers
    }

    @Test func sendsBecomeEventsOfTheHubWithAzuresHeadersMapped() async throws {
        let hub = TestHub()
        let publisher = hub.publisher
        try await hub.run { client async throws in
            let template = try await client.call(
                .post, "/sports/messages?api-version=2020-06",
                Self.headers(["ServiceBusNotification-Format": "template", "ServiceBusNotification-Tags": "World && !Muted"]),
                body: #"{"headline":"Goal"}"#)
            #expect(template.status == .created, "\(template.text)")
            let id = try #require(try template.json()["notificationId"]?.stringValue)
            #expect(template.headers[.location] == "http://localhost:8080/sports/messages/\(id)?api-version=2020-06")
            #expect(template.headers[HTTPField.Name("TrackingId")!] != nil)
            let event = try #require(publisher.last?.event)
            #expect(event.hub == HubName("sports"))
            #expect(event.properties == ["headline": "Goal"])
            #expect(event.audience.expression != nil)
            #expect(event.templates == nil)

            let native = try await client.call(
                .post, "/sports/messages",
                Self.headers([
                    "ServiceBusNotification-Format": "apple", "apns-priority": "5", "apns-collapse-id": "score",
                    "ServiceBusNotification-TimeToLive": "60",
                ]),
                body: #"{"aps":{"alert":"1-0"}}"#)
            #expect(native.status == .created, "\(native.text)")
            let sent = try #require(publisher.last?.event)
            #expect(sent.native[.apns] == #"{"aps":{"alert":"1-0"}}"#)
            #expect(sent.templates == [], "a native send reaches native registrations only")
            #expect(sent.priority == .normal && sent.collapseId == "score" && sent.expiresAt != nil)
            #expect(sent.audience == .broadcast, "no tags header: every device of the hub")

            let fcm = try await client.call(
                .post, "/sports/messages", Self.headers(["ServiceBusNotification-Format": "fcmv1"]),
                body: #"{"notification":{"title":"T"}}"#)
            #expect(fcm.status == .created)
            #expect(publisher.last?.event.native[.fcm] == #"{"message":{"notification":{"title":"T"}}}"#)
        }
        #expect(publisher.count == 3)
    }

    @Test func directSendsNameTheirHandlesAndTakeTheNativePayload() async throws {
        let hub = TestHub()
        let publisher = hub.publisher
        let token = String(repeating: "ab", count: 32)
        try await hub.run { client async throws in
            let one = try await client.call(
                .post, "/sports/messages?direct&api-version=2015-04",
                Self.headers(["ServiceBusNotification-Format": "apple", "ServiceBusNotification-DeviceHandle": token]),
                body: #"{"aps":{"alert":"Goal"}}"#)
            #expect(one.status == .created, "\(one.text)")
            let id = try #require(try one.json()["notificationId"]?.stringValue)
            #expect(one.headers[.location] == "http://localhost:8080/sports/messages/\(id)?api-version=2020-06")
            let event = try #require(publisher.last?.event)
            #expect(event.direct == [DirectTarget(platform: .apns, handle: token)])
            #expect(event.native[.apns] == #"{"aps":{"alert":"Goal"}}"#)
            #expect(event.templates == nil && event.audience == .broadcast)

            // The direct batch send: the payload and up to 1,000 handles in a multipart body.
            let body = [
                "--b1", "Content-Type: application/json", "Content-Disposition: inline; name=notification", "",
                #"{"notification":{"body":"Goal"}}"#, "--b1", "Content-Type: application/json",
                "Content-Disposition: inline; name=devices", "",
                #"["fcm-token-0000000000000000000000001","fcm-token-0000000000000000000000002","fcm-token-0000000000000000000000001"]"#,
                "--b1--", "",
            ].joined(separator: "\r\n")
            let batch = try await client.call(
                .post, "/sports/messages/$batch?direct&api-version=2015-08",
                Self.headers(["ServiceBusNotification-Format": "fcmv1", "Content-Type": #"multipart/mixed; boundary="b1""#]),
                body: body)
            #expect(batch.status == .created, "\(batch.text)")
            let batched = try #require(publisher.last?.event)
            #expect(
                batched.direct
                    == ["fcm-token-0000000000000000000000001", "fcm-token-0000000000000000000000002"].map {
                        DirectTarget(platform: .fcm, handle: $0)
                    })
            #expect(batched.native[.fcm] == #"{"message":{"notification":{"body":"Goal"}}}"#)
        }
        #expect(publisher.count == 2)
    }

    @Test func directSendsRefuseWhatDoesNotApplyToThemNamingWhere() async throws {
        let hub = TestHub()
        let token = String(repeating: "ab", count: 32)
        try await hub.run { client async throws in
            let apple = ["ServiceBusNotification-Format": "apple"]
            let cases: [(String, [String: String], String, String)] = [
                ("/sports/messages?direct", apple, #"{"aps":{}}"#, "ServiceBusNotification-DeviceHandle"),
                ("/sports/messages", apple.merging(["ServiceBusNotification-DeviceHandle": token]) { $1 }, #"{"aps":{}}"#, "?direct"),
                (
                    "/sports/messages?direct",
                    ["ServiceBusNotification-Format": "template", "ServiceBusNotification-DeviceHandle": token], "{}",
                    "native payload"
                ),
                (
                    "/sports/messages?direct",
                    apple.merging(["ServiceBusNotification-DeviceHandle": token, "ServiceBusNotification-Tags": "World"]) { $1 },
                    #"{"aps":{}}"#, "ServiceBusNotification-Tags"
                ),
                (
                    "/sports/messages?direct", apple.merging(["ServiceBusNotification-DeviceHandle": "not-hex"]) { $1 },
                    #"{"aps":{}}"#, "ServiceBusNotification-DeviceHandle"
                ),
                (
                    "/sports/messages?direct=maybe", apple.merging(["ServiceBusNotification-DeviceHandle": token]) { $1 },
                    #"{"aps":{}}"#, "direct"
                ),
                (
                    "/sports/messages?direct&test",
                    apple.merging(["ServiceBusNotification-DeviceHandle": token]) { $1 }, #"{"aps":{}}"#, "test"
                ),
                ("/sports/messages/$batch", apple.merging(["Content-Type": "multipart/mixed; boundary=b"]) { $1 }, "", "?direct"),
                ("/sports/messages/$batch?direct", apple.merging(["Content-Type": "application/json"]) { $1 }, "{}", "multipart/mixed"),
                (
                    "/sports/messages/$batch?direct", apple.merging(["Content-Type": "multipart/mixed; boundary=b"]) { $1 },
                    "--b\r\nContent-Disposition: inline; name=notification\r\n\r\n{}\r\n--b--\r\n", "devices"
                ),
                (
                    "/sports/messages/$batch?direct", apple.merging(["Content-Type": "multipart/mixed; boundary=b"]) { $1 },
                    "--b\r\nContent-Disposition: inline; name=notification\r\n\r\n{\"aps\":{}}\r\n--b\r\n"
                        + "Content-Disposition: inline; name=devices\r\n\r\n[\"\(token)\", \"zz\"]\r\n--b--\r\n",
                    "devices[1].handle"
                ),
                (
                    "/sports/messages/$batch?direct", apple.merging(["Content-Type": "multipart/mixed; boundary=b"]) { $1 },
                    "--b\r\nContent-Disposition: inline; name=notification\r\n\r\n{}\r\n--b\r\n"
                        + "Content-Disposition: inline; name=devices\r\n\r\n[]\r\n--b--\r\n",
                    "devices"
                ),
            ]
            for (path, fields, body, field) in cases {
                let reply = try await client.call(.post, path, Self.headers(fields), body: body)
                #expect(reply.status == .badRequest, "\(path) \(fields): \(reply.text)")
                #expect(reply.text.contains(field), "\(path) \(fields) should name \(field): \(reply.text)")
            }
        }
        #expect(hub.publisher.count == 0)
    }

    @Test func whatHeraldCannotHonourIsRefusedInAzuresXMLNamingWhere() async throws {
        let hub = TestHub()
        try await hub.run { client async throws in
            let cases: [([String: String], String, String)] = [
                ([:], "{}", "ServiceBusNotification-Format"),
                (["ServiceBusNotification-Format": "baidu"], "{}", "ServiceBusNotification-Format"),
                (["ServiceBusNotification-Format": "apple", "apns-topic": "com.x"], #"{"aps":{}}"#, "apns-topic"),
                (["ServiceBusNotification-Format": "apple", "apns-push-type": "background"], #"{"aps":{}}"#, "apns-push-type"),
                (
                    ["ServiceBusNotification-Format": "template", "ServiceBusNotification-Tags": "World &&"], "{}",
                    "ServiceBusNotification-Tags"
                ),
                (["ServiceBusNotification-Format": "template"], "[1]", "properties"),
            ]
            for (fields, body, field) in cases {
                let reply = try await client.call(.post, "/sports/messages", Self.headers(fields), body: body)
                #expect(reply.status == .badRequest, "\(fields): \(reply.text)")
                #expect(reply.headers[.contentType] == "application/xml; charset=utf-8")
                #expect(reply.text.hasPrefix("<Error><Code>400</Code><Detail>"), "\(reply.text)")
                #expect(reply.text.contains(field), "\(fields) should name \(field): \(reply.text)")
            }
            // A test send goes now: it cannot be scheduled.
            let scheduledTest = try await client.call(
                .post, "/sports/schedulednotifications",
                Self.headers([
                    "ServiceBusNotification-Format": "template", "ServiceBusNotification-TestSend": "true",
                    "ServiceBusNotification-ScheduleTime": "2099-01-01T00:00:00Z",
                ]), body: "{}")
            #expect(scheduledTest.status == .badRequest && scheduledTest.text.contains("test"), "\(scheduledTest.text)")
            let anonymous = try await client.call(.post, "/sports/messages", [:], body: "{}")
            #expect(anonymous.status == .unauthorized)
            #expect(anonymous.text.hasPrefix("<Error><Code>401</Code>"))
            let unknown = try await client.call(
                .post, "/nowhere/messages", Self.headers(["ServiceBusNotification-Format": "template"]), body: "{}")
            #expect(unknown.status == .notFound)
        }
        #expect(hub.publisher.count == 0)
    }

    @Test func installationsInAzuresShapeAndTheOutcomeDetailsOfAStatus() async throws {
        var hub = TestHub()
        var status = StatusRecord.accepted(eventId: "ev-1", taskCount: 1, publishedAt: nil, acceptedAt: Date(timeIntervalSince1970: 0))
        status.hub = HubName("sports")!
        status.state = .completed
        status.targets.total = 3
        status.targets.byPlatform = ["apns": 2, "fcm": 1]
        status.timings.completedAt = Date(timeIntervalSince1970: 2)
        status.push = ["apns": ["sent": 1, "unregistered": 1], "fcm": ["sent": 1]]
        hub.statusReader.records["sports/ev-1"] = status
        try await hub.run { client async throws in
            let body =
                #"{"installationId":"i1","platform":"fcmv1","pushChannel":"\#(Fixture.fcmToken)","tags":["World"],"lastUpdate":"2024-01-01T00:00:00Z"}"#
            #expect(try await client.call(.put, "/sports/installations/i1?api-version=2020-06", TestHub.listen, body: body).status == .ok)
            let read = try await client.call(.get, "/sports/installations/i1", TestHub.listen)
            #expect(try read.json()["platform"]?.stringValue == "fcmv1")
            #expect(try read.json()["expirationTime"]?.stringValue == "9999-12-31T23:59:59.9999999Z")
            #expect(try read.json()["hub"] == nil)
            let patched = try await client.call(
                .patch, "/sports/installations/i1", TestHub.listen, body: #"[{"op":"add","path":"/tags","value":"Breaking"}]"#)
            #expect(patched.status == .ok, "\(patched.text)")
            #expect(
                try await client.call(.get, "/sports/installations/i1", TestHub.listen).json()["tags"]?.strings == ["World", "Breaking"])
            let removed = try await client.call(
                .patch, "/sports/installations/i1", TestHub.listen, body: #"[{"op":"remove","path":"/tags/World"}]"#)
            #expect(removed.status == .ok, "\(removed.text)")
            let afterRemove = try await client.call(.get, "/sports/installations/i1", TestHub.listen)
            #expect(try afterRemove.json()["tags"]?.strings == ["Breaking"], "\(afterRemove.text)")
            let variables = try await client.call(
                .put, "/sports/installations/i2", TestHub.listen,
                body: #"{"installationId":"i2","platform":"apns","pushChannel":"\#(Fixture.apnsToken)","pushVariables":{"a":"b"}}"#)
            #expect(variables.status == .badRequest)
            #expect(variables.text.contains("pushVariables"))
            // A browser: Azure's flat subscription object in, the same object out.
            let channel =
                #"{"endpoint":"https://fcm.googleapis.com/fcm/send/dQw4w9WgXcQ:APA91bFoo","p256dh":"BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4","auth":"BTBZMqHH6r4Tts7J_aSIgg"}"#
            let browser = try await client.call(
                .put, "/sports/installations/b1", TestHub.listen,
                body: #"{"installationId":"b1","platform":"browser","pushChannel":\#(channel)}"#)
            #expect(browser.status == .ok, "\(browser.text)")
            let readBrowser = try await client.call(.get, "/sports/installations/b1", TestHub.listen)
            #expect(try readBrowser.json()["platform"]?.stringValue == "browser")
            #expect(try readBrowser.json()["pushChannel"] == (try JSONValue.parse(Array(channel.utf8))), "\(readBrowser.text)")
            #expect(try await client.call(.delete, "/sports/installations/i1", TestHub.listen).status == .noContent)
            #expect(try await client.call(.get, "/sports/installations/i1", TestHub.listen).status == .notFound)

            let details = try await client.call(.get, "/sports/messages/ev-1?api-version=2020-06", TestHub.send)
            #expect(details.status == .ok)
            #expect(details.headers[.contentType] == "application/xml; charset=utf-8")
            let xml = details.text
            #expect(xml.contains("<NotificationId>ev-1</NotificationId>"))
            #expect(xml.contains("<State>Completed</State>"))
            #expect(xml.contains("<TargetPlatforms>apple,fcmv1</TargetPlatforms>"))
            #expect(
                xml.contains(
                    "<ApnsOutcomeCounts><Outcome><Name>Success</Name><Count>1</Count></Outcome><Outcome><Name>ExpiredChannel</Name><Count>1</Count></Outcome></ApnsOutcomeCounts>"
                ), "\(xml)")
            #expect(xml.contains("<FcmV1OutcomeCounts><Outcome><Name>Success</Name><Count>1</Count></Outcome></FcmV1OutcomeCounts>"))
            #expect(try await client.call(.get, "/news/messages/ev-1", TestHub.send).status == .notFound)
        }
    }
}
