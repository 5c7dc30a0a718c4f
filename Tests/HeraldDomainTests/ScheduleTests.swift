import Foundation
@testable import HeraldDomain
import Testing

@Suite("Schedules")
struct ScheduleTests {
    static func event(_ text: String) throws(ValidationFailure) -> NotificationEvent {
        try NotificationEvent.decode(ModelFixtures.bytes(text))
    }

    static let now = ModelFixtures.date("2026-11-25T06:00:00Z")
    static let token = String(repeating: "t", count: 64)

    @Test("sendAt and sendAtLocal decode, round-trip through the canonical JSON, and are part of the content")
    func decoding() throws {
        let instant = try Self.event(#"{"id":"brief","sendAt":"2026-11-25T07:30:00+01:00"}"#)
        #expect(instant.schedule == .at(ModelFixtures.date("2026-11-25T06:30:00Z")))
        #expect(String(decoding: instant.canonicalJSON(), as: UTF8.self).contains(#""sendAt":"2026-11-25T06:30:00Z""#))
        #expect(try NotificationEvent.decode(instant.canonicalJSON()) == instant)
        let local = try Self.event(#"{"id":"digest","sendAtLocal":"2026-11-28T09:00"}"#)
        #expect(local.schedule == .localTime(LocalDateTime(year: 2026, month: 11, day: 28, hour: 9, minute: 0)))
        #expect(try NotificationEvent.decode(local.canonicalJSON()) == local)
        var unscheduled = instant
        unscheduled.schedule = nil
        #expect(unscheduled.contentJSON() != instant.contentJSON())
    }

    @Test("bad schedule fields name the field and say what is wrong")
    func badFields() {
        let cases: [(String, String, String)] = [
            (#"{"sendAt":"2026-11-25T07:30:00Z","sendAtLocal":"2026-11-25T07:30:00"}"#, "sendAtLocal", "not both"),
            (#"{"sendAt":"2026-11-25T07:30:00"}"#, "sendAt", "no offset"),
            (#"{"sendAt":"tomorrow"}"#, "sendAt", "RFC 3339"),
            (#"{"sendAtLocal":"2026-11-25T07:30:00Z"}"#, "sendAtLocal", "no offset or Z"),
            (#"{"sendAtLocal":"2026-02-30T07:30"}"#, "sendAtLocal", "wall-clock time"),
            (#"{"sendAt":7}"#, "sendAt", "string"),
        ]
        for (text, field, words) in cases {
            let issues = ModelFixtures.issues { () throws(ValidationFailure) in try Self.event(text) }
            #expect(
                issues.count == 1 && issues.first?.field == field && issues.first?.message.contains(words) == true, "\(text): \(issues)")
        }
    }

    @Test("sendAt: due within the tolerance goes now; further back or beyond the horizon is refused")
    func instantRules() throws {
        let rules = ScheduleRules(pastToleranceSeconds: 60, horizonSeconds: 30 * 86_400)
        func decide(_ sendAt: String) throws(ValidationFailure) -> ScheduleRules.Decision {
            try rules.decide(try Self.event(#"{"sendAt":"\#(sendAt)"}"#), eventId: "e1", now: Self.now)
        }
        #expect(
            try decide("2026-11-25T07:30:00Z")
                == .schedule([ScheduledRelease(eventId: "e1", releaseAt: ModelFixtures.date("2026-11-25T07:30:00Z"))]))
        #expect(try decide("2026-11-25T05:59:30Z") == .sendNow)
        #expect(try rules.decide(try Self.event("{}"), eventId: "e1", now: Self.now) == .sendNow)
        let past = ModelFixtures.issues { () throws(ValidationFailure) in _ = try decide("2026-11-25T05:00:00Z") }
        #expect(
            past.first?.field == "sendAt" && past.first?.code == "invalid_schedule" && past.first?.message.contains("in the past") == true)
        let far = ModelFixtures.issues { () throws(ValidationFailure) in _ = try decide("2027-01-25T05:00:00Z") }
        #expect(far.first?.field == "sendAt" && far.first?.message.contains("the limit is 30 days") == true, "\(far)")
    }

    @Test("local time: every zone in exactly one part, each part at the zone's own wall time, across a DST change")
    func localParts() throws {
        // 07:30 on 29 March 2026: Europe switched to summer time at 01:00Z that morning,
        // inside the window from the first part (UTC+14) to the last (UTC-12).
        let local = LocalDateTime(year: 2026, month: 3, day: 29, hour: 7, minute: 30)
        let releases = ScheduleRules.localReleases(local, eventId: "brief", defaultZone: "Europe/London")
        let zones = releases.flatMap { $0.timeZones ?? [] }
        #expect(zones.count == TimeZoneRules.knownZones.count && Set(zones).count == zones.count)
        #expect(releases.map(\.releaseAt) == releases.map(\.releaseAt).sorted() && Set(releases.map(\.releaseAt)).count == releases.count)
        #expect(releases.count >= 30 && releases.count <= 45, "\(releases.count) distinct UTC offsets")
        #expect(releases.map(\.eventId) == (1...releases.count).map { "brief@\($0)" })
        var calendar = Calendar(identifier: .gregorian)
        for release in releases {
            for name in release.timeZones ?? [] {
                calendar.timeZone = TimeZone(identifier: name)!
                let parts = calendar.dateComponents([.hour, .minute, .day], from: release.releaseAt)
                #expect(parts.hour == 7 && parts.minute == 30 && parts.day == 29, "\(name) gets it at \(parts)")
            }
        }
        func part(of zone: String) -> ScheduledRelease? { releases.first { $0.timeZones?.contains(zone) == true } }
        #expect(part(of: "Europe/Berlin")?.releaseAt == ModelFixtures.date("2026-03-29T05:30:00Z"))  // CEST, after the change
        #expect(part(of: "Asia/Tokyo")?.releaseAt == ModelFixtures.date("2026-03-28T22:30:00Z"))
        #expect(part(of: "America/New_York")?.releaseAt == ModelFixtures.date("2026-03-29T11:30:00Z"))
        // Devices without a zone go with the default zone's part, and only there.
        #expect(releases.filter(\.includesZoneless).map(\.eventId) == [part(of: "Europe/London")!.eventId])
    }

    @Test("a wall time skipped by the clocks moves forward; one that happens twice goes out the first time")
    func gapsAndRepeats() {
        let berlin = TimeZone(identifier: "Europe/Berlin")!
        #expect(
            LocalDateTime(year: 2026, month: 3, day: 29, hour: 2, minute: 30).instant(in: berlin)
                == ModelFixtures.date("2026-03-29T01:30:00Z"))
        #expect(
            LocalDateTime(year: 2026, month: 10, day: 25, hour: 2, minute: 30).instant(in: berlin)
                == ModelFixtures.date("2026-10-25T00:30:00Z"))
        #expect(
            LocalDateTime(year: 2026, month: 7, day: 1, hour: 9, minute: 0).instant(in: berlin)
                == ModelFixtures.date("2026-07-01T07:00:00Z"))
    }

    @Test("local time: already past in the earliest zone, or beyond the horizon in the latest, is refused")
    func localRules() throws {
        let rules = ScheduleRules()
        func decide(_ local: String) throws(ValidationFailure) -> ScheduleRules.Decision {
            try rules.decide(try Self.event(#"{"sendAtLocal":"\#(local)"}"#), eventId: "d", now: Self.now)
        }
        // 06:00Z is 20:00 in UTC+14: 07:30 local on the 25th has passed there.
        let past = ModelFixtures.issues { () throws(ValidationFailure) in _ = try decide("2026-11-25T07:30:00") }
        #expect(past.first?.field == "sendAtLocal" && past.first?.message.contains("already passed") == true, "\(past)")
        guard case .schedule(let parts) = try decide("2026-11-26T07:30:00") else {
            Issue.record("expected a schedule")
            return
        }
        #expect(parts.count > 30)
        let far = ModelFixtures.issues { () throws(ValidationFailure) in _ = try decide("2026-12-25T12:00:00") }
        #expect(far.first?.field == "sendAtLocal" && far.first?.message.contains("ahead") == true, "\(far)")
        let longId = String(repeating: "x", count: IdentifierRules.maxEventIdLength)
        let tooLong = ModelFixtures.issues { () throws(ValidationFailure) in
            _ = try rules.decide(try Self.event(#"{"sendAtLocal":"2026-11-26T07:30:00"}"#), eventId: longId, now: Self.now)
        }
        #expect(tooLong.first?.field == "id", "\(tooLong)")
    }

    @Test("a released part reaches exactly its zones' devices (and zoneless ones for the default zone's part)")
    func releasedAudience() throws {
        let event = try Self.event(#"{"id":"d","tags":"World || Politics","sendAtLocal":"2026-11-26T07:30:00"}"#)
        let part = ScheduledRelease(
            eventId: "d@3", releaseAt: Self.now, timeZones: ["Europe/Berlin", "Europe/Paris"], includesZoneless: true)
        let released = event.released(part)
        #expect(released.id == "d@3" && released.schedule == nil)
        func tags(_ zone: String?, _ extra: String...) -> Set<String> { Set(extra + (zone.map(TagRules.timeZoneTags) ?? [])) }
        #expect(released.audience.matches(tags("Europe/Paris", "World")))
        #expect(released.audience.matches(tags(nil, "Politics")))
        #expect(!released.audience.matches(tags("Europe/Paris", "Sports")))
        #expect(!released.audience.matches(tags("Asia/Tokyo", "World")))
        var other = part
        other.includesZoneless = false
        #expect(!event.released(other).audience.matches(tags(nil, "World")))
        let broadcast = try Self.event(#"{"id":"b","sendAtLocal":"2026-11-26T07:30:00"}"#).released(other)
        #expect(broadcast.audience.matches(tags("Europe/Berlin")) && !broadcast.audience.matches(tags("Asia/Tokyo")))
        let once = try Self.event(#"{"id":"o","sendAt":"2026-11-26T07:30:00Z"}"#)
        #expect(once.released(ScheduledRelease(eventId: "o", releaseAt: Self.now)).audience == once.audience)
    }

    @Test("timeZone on registrations and installations: IANA names only; $TimeZone tags are the index's")
    func registrationZones() {
        #expect(TimeZoneRules.problem("Europe/Paris") == nil)
        #expect(TimeZoneRules.problem("Mars/Olympus")?.contains("unknown time zone") == true)
        let registration = Registration(
            registrationId: "r1", platform: .fcm, handle: Self.token, tags: ["$TimeZone:{UTC}"], timeZone: "Nowhere")
        let issues = registration.validate()
        #expect(Set(issues.map(\.field)) == ["timeZone", "tags[0]"], "\(issues)")
        let good = Registration(registrationId: "r1", platform: .fcm, handle: Self.token, tags: ["World"], timeZone: "Asia/Tokyo")
        #expect(good.validate().isEmpty)
        #expect(String(decoding: good.jsonBytes(), as: UTF8.self).contains(#""timeZone":"Asia/Tokyo""#))
        let plain = Registration(registrationId: "r1", platform: .fcm, handle: Self.token)
        #expect(!String(decoding: plain.jsonBytes(), as: UTF8.self).contains("timeZone"))
        let installation = Installation(installationId: "i1", platform: .fcm, pushChannel: Self.token, timeZone: "Asia/Tokyo")
        #expect(installation.registrations(version: 1).allSatisfy { $0.timeZone == "Asia/Tokyo" })
        #expect(TagRules.problem(with: "$TimeZone:{America/Argentina/Buenos_Aires}") == nil)
    }
}
