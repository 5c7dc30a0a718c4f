import Foundation
import HTTPTypes
import HeraldAPI
import HeraldDomain
import Hummingbird
import HummingbirdTesting
import Testing

@Suite("The console's routes: its pages, who is signed in, recent alerts, reach and the live stream")
struct ConsoleRouteTests {
    @Test("the page and its files are served with a strict Content-Security-Policy; an unknown file is a 404 with a body")
    func pagesAndFiles() async throws {
        try await TestHub().run { client async throws in
            let page = try await client.call(.get, "/console")
            #expect(page.status == .ok)
            #expect(page.headers[.contentType] == "text/html; charset=utf-8")
            let policy = try #require(page.headers[HTTPField.Name("Content-Security-Policy")!])
            #expect(policy.contains("script-src 'self'") && policy.contains("frame-ancestors 'none'") && !policy.contains("unsafe"))
            #expect(page.headers[HTTPField.Name("X-Content-Type-Options")!] == "nosniff")
            #expect(page.text.contains("/console/app.js"), "the page loads its script by an absolute path")
            let script = try await client.call(.get, "/console/app.js")
            #expect(script.status == .ok)
            #expect(script.headers[.contentType] == "text/javascript; charset=utf-8")
            let missing = try await client.call(.get, "/console/nope.js")
            #expect(missing.status == .notFound)
            #expect(missing.errorCode == "not_found")
            let settings = try await client.call(.get, "/console/settings.json")
            #expect(try settings.json()["hubUri"]?.stringValue == TestHub.hubResource)
            #expect(try settings.json()["defaultHub"]?.stringValue == "default")
        }
    }

    @Test("a Send or Manage key opens the console and learns its hub and rights; a Listen key, a user token or no token cannot")
    func session() async throws {
        try await TestHub().run { client async throws in
            let send = try await client.call(.get, "/v1/console/session", TestHub.send)
            #expect(send.status == .ok, "\(send.text)")
            #expect(try send.json()["hub"]?.stringValue == "default")
            #expect(try send.json()["policy"]?.stringValue == "send")
            #expect(try send.json()["rights"]?.strings == ["send"])
            #expect(try send.json()["namespace"]?.boolValue == true)
            let listen = try await client.call(.get, "/v1/console/session", TestHub.listen)
            #expect(listen.status == .forbidden)
            #expect(listen.errorCode == "insufficient_rights")
            #expect(try await client.call(.get, "/v1/console/session", TestHub.user("alice")).status == .forbidden)
            #expect(try await client.call(.get, "/v1/console/session").status == .unauthorized)
            let hubKey = try await client.call(.get, "/v1/hubs/sports/console/session", TestHub.manage)
            #expect(try hubKey.json()["hub"]?.stringValue == "sports", "\(hubKey.text)")
        }
    }

    @Test("state=recent lists the hub's events newest first, without rehearsals or other hubs' events; limit is checked")
    func recent() async throws {
        var hub = TestHub()
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        for (offset, id) in ["bn-1", "bn-2", "bn-3~rehearsal-0-1", "bn-2~test-0-4"].enumerated() {
            hub.statusReader.records[id] = .accepted(
                eventId: id, taskCount: 1, publishedAt: start.addingTimeInterval(Double(offset)), acceptedAt: start)
        }
        var sent = StatusRecord.accepted(eventId: "bn-1", taskCount: 1, publishedAt: start, acceptedAt: start)
        sent.state = .completed
        sent.targets = DeliveryCounts(total: 3, byPlatform: ["apns": 3], byTemplate: [:])
        sent.push = ["apns": ["sent": 2, "unregistered": 1]]
        hub.statusReader.records["bn-1"] = sent
        hub.statusReader.records["sports/goal-1"] = .accepted(
            eventId: "goal-1", taskCount: 1, publishedAt: start.addingTimeInterval(9), acceptedAt: start, hub: HubName("sports")!)
        try await hub.run { client async throws in
            let list = try await client.call(.get, "/v1/notifications?state=recent", TestHub.send)
            #expect(list.status == .ok, "\(list.text)")
            let items = try #require(try list.json()["notifications"]?.arrayValue)
            #expect(items.compactMap { $0["id"]?.stringValue } == ["bn-2~test-0-4", "bn-2", "bn-1"])
            #expect(items[0]["test"]?.boolValue == true)
            #expect(items[2]["state"]?.stringValue == "completed")
            #expect(items[2]["targets"]?.intValue == 3 && items[2]["sent"]?.intValue == 2)
            let one = try await client.call(.get, "/v1/notifications?state=recent&limit=1", TestHub.manage)
            #expect(try one.json()["notifications"]?.arrayValue?.count == 1)
            let sports = try await client.call(.get, "/v1/hubs/sports/notifications?state=recent", TestHub.manage)
            #expect(try sports.json()["notifications"]?[0]?["id"]?.stringValue == "goal-1")
            let bad = try await client.call(.get, "/v1/notifications?state=recent&limit=0", TestHub.send)
            #expect(bad.status == .badRequest && bad.errorField == "limit")
            #expect(try await client.call(.get, "/v1/notifications?state=recent", TestHub.listen).status == .forbidden)
            let other = try await client.call(.get, "/v1/notifications?state=sent", TestHub.manage)
            #expect(other.status == .badRequest && other.errorField == "state")
        }
    }

    @Test("an event's reach over time: each stage as [ms from the publish, count so far]; 404 for an unknown event")
    func reach() async throws {
        var hub = TestHub()
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        hub.statusReader.records["bn-1"] = .accepted(eventId: "bn-1", taskCount: 1, publishedAt: start, acceptedAt: start)
        hub.statusReader.series["bn-1"] = ReachSeries(
            committed: [.init(elapsedMs: 120, count: 2)], sent: [.init(elapsedMs: 200, count: 1), .init(elapsedMs: 300, count: 2)],
            opened: [])
        try await hub.run { client async throws in
            let reach = try await client.call(.get, "/v1/notifications/bn-1/reach", TestHub.send)
            #expect(reach.status == .ok, "\(reach.text)")
            #expect(reach.text.contains(#""committed":[[120,2]],"sent":[[200,1],[300,2]],"opened":[]"#), "\(reach.text)")
            #expect(try reach.json()["publishedAt"]?.stringValue == "2027-01-15T08:00:00.000Z")
            #expect(try await client.call(.get, "/v1/notifications/bn-9/reach", TestHub.send).status == .notFound)
            #expect(try await client.call(.get, "/v1/notifications/bn-1/reach", TestHub.listen).status == .forbidden)
        }
    }

    @Test("the live stream sends the status and reach at once and on each change, then ends once the event is final and fully sent")
    func liveStream() async throws {
        var hub = TestHub()
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        var processing = StatusRecord.accepted(eventId: "bn-1", taskCount: 2, publishedAt: start, acceptedAt: start)
        processing.state = .processing
        var completed = processing
        completed.state = .completed
        completed.tasks.completed = 2
        completed.targets = DeliveryCounts(total: 2, byPlatform: ["apns": 2], byTemplate: [:])
        var sent = completed
        sent.push = ["apns": ["sent": 2]]
        // Each update reads the status twice (the update and its reach): two reads per state.
        hub.statusReader.sequences["bn-1"] = StatusSequence([processing, processing, completed, completed, sent])
        try await hub.run { client async throws in
            let stream = try await client.call(.get, "/v1/notifications/bn-1/live", TestHub.send)
            #expect(stream.status == .ok)
            #expect(stream.headers[.contentType] == "text/event-stream; charset=utf-8")
            let events = stream.text.components(separatedBy: "\n\n").filter { !$0.isEmpty }
            let names = events.compactMap { $0.split(separator: "\n").first { $0.hasPrefix("event: ") }.map { String($0.dropFirst(7)) } }
            #expect(names == ["update", "update", "update", "end"], "\(stream.text)")
            let states = events.compactMap { event -> String? in
                guard let data = event.split(separator: "\n").first(where: { $0.hasPrefix("data: ") }) else { return nil }
                return (try? JSONValue.parse(Array(data.dropFirst(6).utf8)))?["status"]?["state"]?.stringValue
            }
            #expect(states == ["processing", "completed", "completed"])
            #expect(try await client.call(.get, "/v1/notifications/bn-9/live", TestHub.send).status == .notFound)
        }
    }
}
