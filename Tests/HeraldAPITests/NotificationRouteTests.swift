import Foundation
import HTTPTypes
import HeraldAPI
import HeraldDomain
import Hummingbird
import HummingbirdTesting
import Testing

@Suite("Notifications")
struct NotificationRouteTests {
    @Test func publishAssignsAnIdAndPointsAtItsStatus() async throws {
        let hub = TestHub()
        try await hub.run { client async throws in
            let body =
                #"{"tags":"(World || Politics) && !Sports","properties":{"News_English":"Summit ends","News_French":"Fin du sommet","News_Mandarin":"峰会结束"},"priority":"high"}"#
            let response = try await client.call(.post, "/v1/notifications", TestHub.send, body: body)
            #expect(response.status == .accepted)
            let id = try #require(try response.json()["id"]?.stringValue)
            #expect(id.hasPrefix("ev-"))
            #expect(response.headers[.location] == "/v1/notifications/\(id)")
        }
        let published = try #require(hub.publisher.last)
        #expect(published.event.properties["News_Mandarin"] == "峰会结束")
        #expect(published.event.publishedAt != nil)
        // The published bytes are the event with its assigned id, readable by the planner.
        let decoded = try NotificationEvent.decode(published.body)
        #expect(decoded.id == published.event.id)
        #expect(decoded.priority == .high)
    }

    @Test("a member the event does not have (dryRun in the body) is a 400 naming it, and nothing is published")
    func unknownMemberIsRefused() async throws {
        let hub = TestHub()
        try await hub.run { client async throws in
            let response = try await client.call(
                .post, "/v1/notifications", TestHub.send, body: #"{"tags":"World","properties":{"News_English":"x"},"dryRun":true}"#)
            #expect(response.status == .badRequest)
            #expect(response.errorField == "dryRun", "\(response.text)")
            #expect(response.text.contains("unknown_field"), "\(response.text)")
        }
        #expect(hub.publisher.last == nil)
    }

    @Test func publishKeepsACallerChosenId() async throws {
        let hub = TestHub()
        try await hub.run { client async throws in
            let response = try await client.call(
                .post, "/v1/notifications", TestHub.send,
                body:
                    #"{"id":"bn-2026-11-21-0001","tags":["World","Politics"],"native":{"apns":{"aps":{"alert":"Summit ends","category":"INVITE_CATEGORY"}}}}"#
            )
            #expect(try response.json()["id"]?.stringValue == "bn-2026-11-21-0001")
        }
        #expect(hub.publisher.last?.event.native[.apns]?.contains("INVITE_CATEGORY") == true)
    }

    @Test("a test send answers with its own id, marked test, never conflicts with the event's id, and its status is readable")
    func testSend() async throws {
        var hub = TestHub()
        let fanout = StoppingFanout()
        hub.fanout = fanout
        hub.publisher.conflicting.withLock { _ = $0.insert("bn-5") }
        try await hub.run { client async throws in
            let response = try await client.call(
                .post, "/v1/notifications", TestHub.send,
                body: #"{"id":"bn-5","properties":{"News_English":"x"},"testRecipients":["reg-1","$UserId:alice"]}"#)
            #expect(response.status == .accepted, "\(response.text)")
            let id = try #require(try response.json()["id"]?.stringValue)
            #expect(id == "bn-5~test-0-0")
            #expect(try response.json()["test"]?.boolValue == true)
            #expect(try response.json()["eventId"]?.stringValue == "bn-5")
            #expect(response.headers[.location] == "/v1/notifications/bn-5~test-0-0")
            fanout.set(StatusRecord.accepted(eventId: id, taskCount: 1, publishedAt: nil, acceptedAt: Date()))
            let status = try await client.call(.get, "/v1/notifications/\(id)", TestHub.send)
            #expect(status.status == .ok, "\(status.text)")
            #expect(try status.json()["test"]?.boolValue == true)
            let bad = try await client.call(
                .post, "/v1/notifications", TestHub.send, body: #"{"properties":{"a":"b"},"testRecipients":["has space"]}"#)
            #expect(bad.status == .badRequest && bad.errorField == "testRecipients[0]", "\(bad.text)")
        }
        #expect(hub.publisher.last?.event.testRecipients == [.device("reg-1"), .user("alice")])
    }

    @Test(
        "dryRun=true rehearses: 200 with the rehearsal's status and its own id, nothing published; a bad dryRun or one with testRecipients is a 400"
    )
    func rehearsal() async throws {
        var hub = TestHub()
        let fanout = StoppingFanout()
        hub.fanout = fanout
        var done = StatusRecord.accepted(eventId: "bn-8~rehearsal-0-0", taskCount: 2, publishedAt: nil, acceptedAt: Date())
        done.state = .completed
        done.tasks.completed = 2
        done.targets = DeliveryCounts(total: 12, byPlatform: ["apns": 12], byTemplate: ["newsEnglish": 12])
        fanout.set(done)
        try await hub.run { client async throws in
            let body = #"{"id":"bn-8","tags":"World","properties":{"News_English":"x"}}"#
            let reply = try await client.call(.post, "/v1/notifications?dryRun=true", TestHub.send, body: body)
            #expect(reply.status == .ok, "\(reply.text)")
            #expect(try reply.json()["id"]?.stringValue == "bn-8~rehearsal-0-0")
            #expect(try reply.json()["rehearsal"]?.boolValue == true)
            #expect(try reply.json()["status"]?["rehearsal"]?.boolValue == true)
            #expect(try reply.json()["status"]?["targets"]?["total"]?.intValue == 12, "\(reply.text)")
            #expect(try reply.json()["expected"] == nil, "no expected times before the deployment measured a fan-out")
            let bad = try await client.call(.post, "/v1/notifications?dryRun=yes", TestHub.send, body: body)
            #expect(bad.status == .badRequest && bad.errorField == "dryRun", "\(bad.text)")
            let withTests = try await client.call(
                .post, "/v1/notifications?dryRun=true", TestHub.send,
                body: #"{"properties":{"a":"b"},"testRecipients":["reg-1"]}"#)
            #expect(withTests.status == .badRequest && withTests.errorField == "testRecipients", "\(withTests.text)")
        }
        #expect(hub.publisher.last == nil, "a rehearsal publishes no send")
        #expect(hub.publisher.rehearsed.withLock { $0.map(\.id) } == ["bn-8"])
    }

    @Test("a rehearsal's expected times are its audience at the deployment's measured speed: half and nine tenths of it")
    func rehearsalExpectedTimes() async throws {
        var hub = TestHub()
        let fanout = StoppingFanout(throughput: 400_000)
        hub.fanout = fanout
        var done = StatusRecord.accepted(eventId: "bn-9~rehearsal-0-0", taskCount: 1, publishedAt: nil, acceptedAt: Date())
        done.state = .completed
        done.targets = DeliveryCounts(total: 1_000_000, byPlatform: ["apns": 1_000_000], byTemplate: [:])
        fanout.set(done)
        try await hub.run { client async throws in
            let reply = try await client.call(
                .post, "/v1/notifications?dryRun=true", TestHub.send, body: #"{"id":"bn-9","properties":{"News_English":"x"}}"#)
            #expect(reply.status == .ok, "\(reply.text)")
            let expected = try reply.json()["expected"]
            #expect(expected?["throughputPerSecond"]?.intValue == 400_000, "\(reply.text)")
            #expect(expected?["halfSeconds"] == .number("1.25") && expected?["ninetyPercentSeconds"] == .number("2.25"), "\(reply.text)")
        }
    }

    @Test("a reused id with other content is a 409 that points at the existing event")
    func reusedIdConflicts() async throws {
        let hub = TestHub()
        hub.publisher.conflicting.withLock { _ = $0.insert("dup-1") }
        try await hub.run { client async throws in
            let response = try await client.call(
                .post, "/v1/notifications", TestHub.send, body: #"{"id":"dup-1","tags":"Sports","properties":{"a":"b"}}"#)
            #expect(response.status == .conflict)
            #expect(response.errorCode == "duplicate_id_conflict")
            #expect(response.headers[.location] == "/v1/notifications/dup-1")
        }
        #expect(hub.publisher.count == 0)
    }

    @Test("a status read while the store is down is a 503 to retry, not a 500")
    func statusWhileTheStoreIsDown() async throws {
        struct StoreDown: Error {}
        var hub = TestHub()
        hub.statusReader.failure = StoreDown()
        try await hub.run { client async throws in
            let response = try await client.call(.get, "/v1/notifications/bn-1", TestHub.send)
            #expect(response.status == .serviceUnavailable)
            #expect(response.errorCode == "unavailable")
            #expect(response.headers[.retryAfter] == "1")
        }
    }

    @Test func statusIsReadBackOrNotFound() async throws {
        var hub = TestHub()
        hub.statusReader.records["bn-1"] = .accepted(
            eventId: "bn-1", taskCount: 4, publishedAt: nil, acceptedAt: Date(timeIntervalSince1970: 1_800_000_000))
        try await hub.run { client async throws in
            let found = try await client.call(.get, "/v1/notifications/bn-1", TestHub.send)
            #expect(found.status == .ok)
            #expect(try found.json()["eventId"]?.stringValue == "bn-1")
            #expect(try found.json()["state"]?.stringValue == "accepted")
            #expect(try await client.call(.get, "/v1/notifications/bn-2", TestHub.send).status == .notFound)
            #expect(try await client.call(.get, "/v1/notifications/bn-1", TestHub.listen).status == .forbidden)
        }
    }

    @Test("an id with # (a quiet-hours release's) is read percent-encoded; an id with an encoded character no id has is a 400")
    func statusOfAnIdWithAHash() async throws {
        var hub = TestHub()
        hub.statusReader.records["bn-1#quiet-1800000000"] = .accepted(
            eventId: "bn-1#quiet-1800000000", taskCount: 1, publishedAt: nil, acceptedAt: Date(timeIntervalSince1970: 1_800_000_000))
        try await hub.run { client async throws in
            let found = try await client.call(.get, "/v1/notifications/bn-1%23quiet-1800000000", TestHub.send)
            #expect(found.status == .ok, "\(found.text)")
            #expect(try found.json()["eventId"]?.stringValue == "bn-1#quiet-1800000000")
            let odd = try await client.call(.get, "/v1/notifications/bn-1%20x", TestHub.send)
            #expect(odd.status == .badRequest && odd.errorField == "id", "\(odd.text)")
        }
    }

    @Test(
        "engagements: an app reports opens and dismissals with its Listen key; each device counts once; the status shows the funnel; unknown events and devices are 404, bad bodies 400 naming the field"
    )
    func engagements() async throws {
        var hub = TestHub()
        let publishedAt = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 - 60).rounded())
        let openedAt = ISO8601Timestamp.format(publishedAt.addingTimeInterval(2.5), precision: .milliseconds)
        var status = StatusRecord.accepted(eventId: "bn-7", taskCount: 1, publishedAt: publishedAt, acceptedAt: publishedAt)
        status.state = .completed
        status.targets.total = 4
        status.push = ["apns": ["sent": 3, "failed": 1]]
        hub.statusReader.records["bn-7"] = status
        let phone = try await hub.registry.put(
            Registration(
                registrationId: hub.registry.issueRegistrationId(), platform: .apns, handle: String(repeating: "ab", count: 32),
                tags: ["World"], template: RegistrationTemplate(name: "newsFrench", body: #"{"aps":{"alert":"$(News_French)"}}"#),
                version: 1),
            expectedVersion: nil)
        let tablet = try await hub.registry.put(
            Registration(
                registrationId: hub.registry.issueRegistrationId(), platform: .apns, handle: String(repeating: "cd", count: 32),
                tags: ["World"], version: 1), expectedVersion: nil)
        let engagements = hub.engagements
        try await hub.run { client async throws in
            func report(_ body: String, _ auth: HTTPFields = TestHub.listen, event: String = "bn-7") async throws -> (
                HTTPResponse.Status, String
            ) {
                let reply = try await client.call(.post, "/v1/notifications/\(event)/engagements", auth, body: body)
                return (reply.status, reply.text)
            }
            let opened = try await report(#"{"action":"opened","registrationId":"\#(phone.registrationId)","at":"\#(openedAt)"}"#)
            #expect(opened.0 == .accepted && opened.1.contains(#""counted":true"#), "\(opened)")
            let again = try await report(#"{"action":"opened","registrationId":"\#(phone.registrationId)"}"#)
            #expect(again.0 == .accepted && again.1.contains(#""counted":false"#), "\(again)")
            #expect(try await report(#"{"action":"dismissed","registrationId":"\#(tablet.registrationId)"}"#).0 == .accepted)
            #expect(try await report(#"{"action":"opened","registrationId":"nobody"}"#).0 == .notFound)
            #expect(try await report(#"{"action":"opened","registrationId":"\#(phone.registrationId)"}"#, event: "bn-8").0 == .notFound)
            #expect(try await report(#"{"action":"opened","registrationId":"\#(phone.registrationId)"}"#, TestHub.send).0 == .forbidden)
            for (body, field) in [
                (#"{"action":"liked","registrationId":"r1"}"#, "action"), (#"{"registrationId":"r1"}"#, "action"),
                (#"{"action":"opened"}"#, "registrationId"),
                (#"{"action":"opened","registrationId":"r1","installationId":"i1"}"#, "installationId"),
                (#"{"action":"opened","registrationId":"r1","at":"2999-01-01T00:00:00Z"}"#, "at"),
                (#"{"action":"opened","registrationId":"r1","device":"x"}"#, "device"),
            ] {
                let refused = try await report(body)
                #expect(refused.0 == .badRequest && refused.1.contains(field), "\(body): \(refused)")
            }
            let read = try await client.call(.get, "/v1/notifications/bn-7", TestHub.send)
            let funnel = try #require(try read.json()["engagement"], "\(read.text)")
            #expect(funnel["opened"]?.intValue == 1 && funnel["dismissed"]?.intValue == 1, "\(read.text)")
            #expect(funnel["openedByPlatform"]?["apns"]?.intValue == 1 && funnel["openedByTemplate"]?["newsFrench"]?.intValue == 1)
            #expect(read.text.contains(#""openRate":0.333"#), "one open of three sent: \(read.text)")
            #expect(funnel["medianTimeToOpenMs"]?.intValue == 2_500, "\(read.text)")
        }
        #expect(engagements.recorded.withLock { $0.count } == 3, "each accepted report is on the topic")
    }

    @Test(
        "DELETE stops an event being fanned out: 200 with its cancelled status; a completed one with unsent deliveries or devices held for quiet hours is stopped (202), one fully sent is a 409"
    )
    func stopInFlight() async throws {
        var hub = TestHub()
        let fanout = StoppingFanout()
        hub.fanout = fanout
        var processing = StatusRecord.accepted(
            eventId: "bn-9", taskCount: 8, publishedAt: nil, acceptedAt: Date(timeIntervalSince1970: 1_800_000_000))
        processing.state = .processing
        processing.tasks.completed = 3
        fanout.set(processing)
        var done = processing
        done.eventId = "bn-10"
        done.state = .completed
        done.targets = DeliveryCounts(total: 5, byPlatform: ["apns": 5], byTemplate: ["news": 5])
        done.push = ["apns": ["sent": 4, "unregistered": 1]]
        fanout.set(done)
        var sending = done
        sending.eventId = "bn-11"
        sending.push = ["apns": ["sent": 2]]
        fanout.set(sending)
        // Every delivery sent, but devices held for their quiet hours: their releases are still to come.
        var holding = done
        holding.eventId = "bn-12"
        holding.skippedReasons = ["held_quiet": 2]
        holding.timings.completedAt = Date()
        fanout.set(holding)
        var heldLongAgo = holding
        heldLongAgo.eventId = "bn-13"
        heldLongAgo.timings.completedAt = Date().addingTimeInterval(-QuietRelease.longestHold - 60)
        fanout.set(heldLongAgo)
        try await hub.run { client async throws in
            #expect(try await client.call(.delete, "/v1/notifications/bn-9", TestHub.listen).status == .forbidden)
            let stopped = try await client.call(.delete, "/v1/notifications/bn-9", TestHub.send)
            #expect(stopped.status == .ok, "\(stopped.text)")
            #expect(try stopped.json()["state"]?.stringValue == "cancelled")
            #expect(try stopped.json()["reason"]?.stringValue?.hasPrefix("stopped in flight: 5 of 8 tasks") == true, "\(stopped.text)")
            let late = try await client.call(.delete, "/v1/notifications/bn-10", TestHub.send)
            #expect(late.status == .conflict)
            #expect(late.errorCode == "not_cancellable")
            #expect(late.text.contains("is completed: there is nothing left to cancel"), "\(late.text)")
            let unsent = try await client.call(.delete, "/v1/notifications/bn-11", TestHub.send)
            #expect(unsent.status == .accepted, "\(unsent.text)")
            #expect(try unsent.json()["state"]?.stringValue == "completed")
            #expect(try await client.call(.delete, "/v1/notifications/bn-12", TestHub.send).status == .accepted)
            let released = try await client.call(.delete, "/v1/notifications/bn-13", TestHub.send)
            #expect(released.status == .conflict && released.text.contains("quiet hours"), "\(released.text)")
        }
        #expect(fanout.stops == ["bn-9", "bn-11", "bn-12"])
    }

    @Test(
        "a correction of a completed event publishes the original with the new text over it, breaking, under its own id; unknown, unfinished and bad requests are refused"
    )
    func correction() async throws {
        var hub = TestHub()
        let acceptedAt = Date(timeIntervalSince1970: 1_800_000_000)
        var done = StatusRecord.accepted(eventId: "bn-5", taskCount: 2, publishedAt: nil, acceptedAt: acceptedAt)
        done.state = .completed
        hub.statusReader.records["bn-5"] = done
        hub.statusReader.records["bn-6"] = .accepted(eventId: "bn-6", taskCount: 2, publishedAt: nil, acceptedAt: acceptedAt)
        hub.archive.events["bn-5"] = NotificationEvent(
            id: "bn-5", audience: .expression(try TagExpression.parse("World"), source: "World"),
            properties: ["News_English": "Summit ends", "News_French": "Fin du sommet"], collapseId: "summit")
        try await hub.run { client async throws in
            let body = #"{"properties":{"News_English":"Summit ends without agreement"},"reason":"wrong outcome"}"#
            #expect(try await client.call(.post, "/v1/notifications/bn-5/corrections", TestHub.listen, body: body).status == .forbidden)
            let response = try await client.call(.post, "/v1/notifications/bn-5/corrections", TestHub.send, body: body)
            #expect(response.status == .accepted, "\(response.text)")
            #expect(try response.json()["id"]?.stringValue == "bn-5~correction-0-0")
            #expect(try response.json()["correctionOf"]?.stringValue == "bn-5")
            #expect(response.headers[.location] == "/v1/notifications/bn-5~correction-0-0")

            let unknown = try await client.call(.post, "/v1/notifications/bn-4/corrections", TestHub.send, body: body)
            #expect(unknown.status == .notFound)
            let unfinished = try await client.call(.post, "/v1/notifications/bn-6/corrections", TestHub.send, body: body)
            #expect(unfinished.status == .conflict && unfinished.errorCode == "not_correctable", "\(unfinished.text)")
            let both = try await client.call(
                .post, "/v1/notifications/bn-5/corrections", TestHub.send, body: #"{"withdraw":true,"properties":{"a":"b"}}"#)
            #expect(both.status == .badRequest && both.errorField == "withdraw", "\(both.text)")
        }
        #expect(hub.publisher.count == 1)
        let published = try #require(hub.publisher.last)
        #expect(
            published.event.correction
                == EventCorrection(withdraw: false, by: "send", reason: "wrong outcome", changed: ["properties.News_English"]))
        #expect(published.event.properties == ["News_English": "Summit ends without agreement", "News_French": "Fin du sommet"])
        #expect(published.event.collapseId == "summit" && published.event.urgency == .breaking)
        #expect(published.event.audience.expression != nil)
        let decoded = try NotificationEvent.decode(published.body)
        #expect(decoded.correction == published.event.correction && decoded.properties == published.event.properties)
    }
}
