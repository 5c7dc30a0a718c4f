import Foundation
import HeraldDomain
@testable import HeraldPipeline
import HeraldRedis
import HeraldRegistry
import HeraldTestSupport
import Testing

@Suite("Quiet hours in the fan-out", .heavy, .serialized)
struct QuietHoursTests {
    /// `HH:MM` of the minute `offset` minutes from now, in UTC.
    static func clock(_ offset: Int, from now: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.hour, .minute], from: now)
        let minutes = ((parts.hour! * 60 + parts.minute! + offset) % 1_440 + 1_440) % 1_440
        return String(format: "%02d:%02d", minutes / 60, minutes % 60)
    }

    @Test(
        "a normal alert holds the devices in their quiet hours (held_quiet) and the scheduler releases it to exactly them when their quiet hours end; drop skips them (skipped_quiet); breaking goes through"
    )
    func holdDropAndRelease() async throws {
        let now = Date()
        let clock = TestClock(now)
        try await withPipelineHarness(
            slots: 8, configure: { $0.scheduleClock = { clock.date } },
            body: { harness in
                let quiet = "\(Self.clock(-120, from: now))-\(Self.clock(120, from: now))"
                let later = "\(Self.clock(180, from: now))-\(Self.clock(300, from: now))"
                func device(_ id: String, quietHours: String?, zone: String? = "UTC") -> Registration {
                    var registration = testRegistration(id, tags: ["World"])
                    registration.quietHours = quietHours
                    registration.timeZone = zone
                    return registration
                }
                let sleeping = (0..<5).map { device("q\($0)", quietHours: quiet) }
                // Quiet hours without a zone are in the deployment's default zone (UTC here).
                let zoneless = device("qz", quietHours: quiet, zone: nil)
                let awake = (0..<3).map { device("a\($0)", quietHours: nil) } + (0..<2).map { device("l\($0)", quietHours: later) }
                try await harness.seed(sleeping + [zoneless] + awake)
                harness.startRoles(scheduler: true)

                func send(_ id: String, urgency: Urgency? = nil, policy: QuietHoursPolicy? = nil) async throws -> StatusRecord {
                    var event = NotificationEvent(
                        id: id, audience: .expression(.tag("World"), source: "World"), properties: ["News_English": "Summit ends"],
                        urgency: urgency)
                    event.quietHours = policy
                    _ = try await harness.publish(event)
                    return try await harness.finalStatus(id)
                }
                let held = try await send("qh-hold")
                // Another alert held the same way, then stopped (as DELETE sets it): its release delivers nothing.
                let stoppedHold = try await send("qh-stopped")
                #expect(stoppedHold.skippedReasons?["held_quiet"] == 6, "\(stoppedHold)")
                let stopKey = harness.configuration.layout.stopKey(eventId: "qh-stopped")
                _ = try await harness.pool.withConnection { try await $0.send(RedisCommand("SET", stopKey, "1", "EX", "600")) }
                #expect(held.targets.total == 5 && held.skippedReasons?["held_quiet"] == 6, "\(held)")
                #expect(Set(try await harness.deliveries(eventId: "qh-hold").map(\.registrationId)) == Set(awake.map(\.registrationId)))
                let dropped = try await send("qh-drop", policy: .drop)
                #expect(dropped.targets.total == 5 && dropped.skippedReasons?["skipped_quiet"] == 6, "\(dropped)")
                let breaking = try await send("qh-breaking", urgency: .breaking)
                #expect(breaking.targets.total == 11 && breaking.skippedReasons?["held_quiet"] == nil, "\(breaking)")
                // A rehearsal says who would be held, and holds (schedules) nothing.
                let receipt = try await harness.publishReceipt(
                    NotificationEvent(
                        id: "qh-rehearsed", audience: .expression(.tag("World"), source: "World"),
                        properties: ["News_English": "Summit ends"]),
                    rehearsal: true)
                let rehearsed = try await harness.finalStatus(
                    DerivedSend.rehearsal.eventId(of: "qh-rehearsed", partition: receipt.partition, offset: receipt.offset))
                #expect(rehearsed.targets.total == 5 && rehearsed.skippedReasons?["held_quiet"] == 6, "\(rehearsed)")

                // The held ones go when their quiet hours end, and only they.
                let end = try #require(QuietHours(quiet)?.end(ifQuietAt: now, in: TimeZone(identifier: "UTC")!))
                let releaseId = QuietRelease.eventId(of: "qh-hold", releaseAt: end)
                let scheduled = try await harness.records(harness.configuration.topics.scheduled).filter {
                    $0.key == Array(releaseId.utf8)
                }
                #expect(!scheduled.isEmpty, "no release of the held devices was scheduled")
                #expect(
                    try await harness.records(harness.configuration.topics.scheduled).allSatisfy {
                        let key = String(decoding: $0.key ?? [], as: UTF8.self)
                        return !key.hasPrefix("qh-drop") && !key.hasPrefix("qh-rehearsed") && !key.hasPrefix("qh-breaking")
                    }, "a drop, a rehearsal and a breaking alert schedule nothing")
                clock.set(end)
                // The scheduler's `released` is final for the schedule, not for the fan-out after it.
                let released = try await harness.status(releaseId) { $0.state == .completed }
                #expect(released.targets.total == 6 && released.skipped == 0, "\(released)")
                #expect(
                    Set(try await harness.deliveries(eventId: releaseId).map(\.registrationId))
                        == Set((sleeping + [zoneless]).map(\.registrationId)))
                let stoppedRelease = try await harness.status(QuietRelease.eventId(of: "qh-stopped", releaseAt: end)) {
                    $0.state == .cancelled || $0.state == .completed
                }
                #expect(stoppedRelease.state == .cancelled && stoppedRelease.targets.total == 0, "\(stoppedRelease)")
                #expect(try await harness.deliveries(eventId: QuietRelease.eventId(of: "qh-stopped", releaseAt: end)).isEmpty)
                try await harness.stopRoles()
            })
    }
}

extension QuietHoursTests {
    @Test("a hub that holds breaking alerts in quiet hours holds them like any other; the default hub lets them through")
    func hubHoldsBreaking() async throws {
        let now = Date()
        try await withPipelineHarness(slots: 8) { harness in
            let hub = HubName("calm")!
            try await harness.createHub(hub, quietHoursHoldBreaking: true)
            let quiet = "\(Self.clock(-120, from: now))-\(Self.clock(120, from: now))"
            var devices: [Registration] = []
            for (index, target) in [hub, hub, hub, .default].enumerated() {
                var registration = testRegistration("c\(index)", tags: ["World"])
                registration.quietHours = quiet
                registration.hub = target
                devices.append(registration)
            }
            try await harness.seed(devices)
            harness.startRoles()
            for (id, target) in [("calm-breaking", hub), ("default-breaking", HubName.default)] {
                var event = NotificationEvent(
                    id: id, audience: .expression(.tag("World"), source: "World"), properties: ["News_English": "Quake"], urgency: .breaking
                )
                event.hub = target
                _ = try await harness.publish(event)
            }
            let calm = try await harness.finalStatus("calm-breaking", hub: hub)
            #expect(calm.targets.total == 0 && calm.skippedReasons?["held_quiet"] == 3, "\(calm)")
            let plain = try await harness.finalStatus("default-breaking")
            #expect(plain.targets.total == 1 && plain.skippedReasons?["held_quiet"] == nil, "\(plain)")
            try await harness.stopRoles()
        }
    }
}

@Suite("Quiet hours, the domain")
struct QuietHoursDomainTests {
    static let paris = TimeZone(identifier: "Europe/Paris")!

    @Test("HH:MM-HH:MM is read and written back; an empty or malformed window is refused")
    func parsing() {
        #expect(QuietHours("22:00-07:00")?.description == "22:00-07:00")
        #expect(QuietHours("22:00-07:00")?.tag == "$QuietHours:{22:00-07:00}")
        #expect(QuietHours.fromTag("$QuietHours:{22:00-07:00}") == QuietHours("22:00-07:00"))
        #expect(QuietHours.fromTag("$QuietHours:{any}") == nil)
        for bad in ["22:00-22:00", "24:00-07:00", "22:00", "22-07", "22:00-7:00", "22:60-07:00", ""] {
            #expect(QuietHours(bad) == nil, "\(bad)")
        }
        #expect(TagRules.problem(with: "$QuietHours:{22:00-07:00}") == nil)
        #expect(TagRules.problem(with: QuietHours.anyTag) == nil)
    }

    @Test("a release's id names the event it holds devices of, and no other id does")
    func releaseIds() {
        let id = QuietRelease.eventId(of: "brief#2", releaseAt: Date(timeIntervalSince1970: 1_796_003_940))
        #expect(id == "brief#2#quiet-1796003940")
        #expect(QuietRelease.originalEventId(of: id) == "brief#2")
        for other in ["brief", "brief#quiet-", "#quiet-12", "brief#quiet-12a", "brief#quiet--1"] {
            #expect(QuietRelease.originalEventId(of: other) == nil, "\(other)")
        }
    }

    @Test("inside a window that spans midnight, and outside it: the end is the next 07:00 in the zone")
    func spanningMidnight() throws {
        let window = try #require(QuietHours("22:00-07:00"))
        func at(_ text: String) -> Date { ISO8601Timestamp.parse(text)! }
        // 23:30 in Paris (UTC+1 in November): quiet until 07:00 the next morning.
        #expect(window.end(ifQuietAt: at("2026-11-20T22:30:00Z"), in: Self.paris) == at("2026-11-21T06:00:00Z"))
        // 05:00 in Paris: quiet until 07:00 the same morning.
        #expect(window.end(ifQuietAt: at("2026-11-21T04:00:00Z"), in: Self.paris) == at("2026-11-21T06:00:00Z"))
        // 07:00 exactly is no longer quiet; 21:59 not yet.
        #expect(window.end(ifQuietAt: at("2026-11-21T06:00:00Z"), in: Self.paris) == nil)
        #expect(window.end(ifQuietAt: at("2026-11-21T20:59:00Z"), in: Self.paris) == nil)
        let day = try #require(QuietHours("13:00-15:00"))
        #expect(day.end(ifQuietAt: at("2026-11-21T13:30:00Z"), in: TimeZone(identifier: "UTC")!) == at("2026-11-21T15:00:00Z"))
    }

    @Test("across the clock changes: the window keeps its wall times, and an end inside the skipped hour moves past it")
    func daylightSaving() throws {
        func at(_ text: String) -> Date { ISO8601Timestamp.parse(text)! }
        let night = try #require(QuietHours("22:00-07:00"))
        // The night the clocks go forward (29 March 2026, 02:00 -> 03:00 in Paris): 07:00 is
        // already summer time, UTC+2.
        #expect(night.end(ifQuietAt: at("2026-03-28T22:00:00Z"), in: Self.paris) == at("2026-03-29T05:00:00Z"))
        // The night they go back (25 October 2026, 03:00 -> 02:00): 07:00 is winter time, UTC+1.
        #expect(night.end(ifQuietAt: at("2026-10-24T21:30:00Z"), in: Self.paris) == at("2026-10-25T06:00:00Z"))
        // Quiet until 02:30, which does not exist on 29 March: the end moves to 03:30 summer time.
        let early = try #require(QuietHours("01:00-02:30"))
        #expect(early.end(ifQuietAt: at("2026-03-29T00:15:00Z"), in: Self.paris) == at("2026-03-29T01:30:00Z"))
    }

    @Test(
        "registrations and installations carry quietHours and frequencyCap; a bad one, or a $QuietHours or $FrequencyCap tag set by hand, is refused naming it"
    )
    func documents() throws {
        let body =
            #"{"platform":"fcm","handle":"fcm-token-for-the-quiet-hours-tests-000001","tags":["World"],"timeZone":"Europe/Paris","quietHours":"22:00-07:00"}"#
        let registration = try Registration.decode(Array(body.utf8), registrationId: "r1")
        #expect(registration.quietHours == "22:00-07:00")
        #expect(String(decoding: registration.jsonBytes(), as: UTF8.self).contains(#""quietHours":"22:00-07:00""#))
        let stored = try JSONDecoder().decode(Registration.self, from: JSONEncoder().encode(registration))
        #expect(stored.quietHours == "22:00-07:00")
        for (text, field) in [
            (#"{"platform":"fcm","handle":"fcm-token-for-the-quiet-hours-tests-000001","quietHours":"late"}"#, "quietHours"),
            (#"{"platform":"fcm","handle":"fcm-token-for-the-quiet-hours-tests-000001","tags":["$QuietHours:{22:00-07:00}"]}"#, "tags[0]"),
        ] {
            do {
                _ = try Registration.decode(Array(text.utf8), registrationId: "r1")
                Issue.record("\(text) was accepted")
            } catch {
                #expect(error.issues.map(\.field) == [field], "\(error.issues)")
            }
        }
        // A device's own frequency cap: 1 to 1000, kept, and never a hand-written tag.
        let capped = try Registration.decode(
            Array(#"{"platform":"fcm","handle":"fcm-token-for-the-quiet-hours-tests-000001","frequencyCap":5}"#.utf8),
            registrationId: "r2")
        #expect(capped.frequencyCap == 5)
        #expect(String(decoding: capped.jsonBytes(), as: UTF8.self).contains(#""frequencyCap":5"#))
        #expect(try JSONDecoder().decode(Registration.self, from: JSONEncoder().encode(capped)).frequencyCap == 5)
        for text in [
            #"{"platform":"fcm","handle":"fcm-token-for-the-quiet-hours-tests-000001","frequencyCap":0}"#,
            #"{"platform":"fcm","handle":"fcm-token-for-the-quiet-hours-tests-000001","tags":["$FrequencyCap:{9}"]}"#,
        ] {
            #expect(throws: ValidationFailure.self) { try Registration.decode(Array(text.utf8), registrationId: "r2") }
        }
        #expect(FrequencyCap.override(fromTag: FrequencyCap.tag(7)) == 7 && TagRules.problem(with: FrequencyCap.tag(7)) == nil)
        let installation = try Installation.decode(
            Array(
                #"{"installationId":"i1","platform":"fcm","pushChannel":"fcm-token-for-the-quiet-hours-tests-000001","quietHours":"23:00-06:30","frequencyCap":2}"#
                    .utf8), installationId: "i1")
        #expect(installation.registrations(version: 1).allSatisfy { $0.quietHours == "23:00-06:30" && $0.frequencyCap == 2 })
    }

    @Test("an event's quietHours policy and Herald's quietRelease survive the canonical JSON")
    func eventMembers() throws {
        var event = NotificationEvent(id: "e1", properties: ["a": "b"])
        event.quietHours = .drop
        event.quietRelease = QuietRelease(
            heldAt: ISO8601Timestamp.parse("2026-11-20T22:30:00Z")!, releaseAt: ISO8601Timestamp.parse("2026-11-21T06:00:00Z")!)
        let decoded = try NotificationEvent.decode(event.canonicalJSON())
        #expect(decoded.quietHours == .drop && decoded.quietRelease == event.quietRelease)
        #expect(throws: ValidationFailure.self) { try NotificationEvent.decode(Array(#"{"quietHours":"later"}"#.utf8)) }
        #expect(QuietRelease.eventId(of: "e1", releaseAt: event.quietRelease!.releaseAt) == "e1#quiet-1795240800")
        #expect(IdentifierRules.eventIdProblem("e1#quiet-1795240800") == nil)
    }
}
