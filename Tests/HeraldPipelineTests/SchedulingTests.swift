import Foundation
import HeraldDomain
import HeraldKafka
import HeraldPipeline
import HeraldRedis
import HeraldStreams
import HeraldTestSupport
import Testing

/// Scheduled events end to end: the planner keeps them on `herald.scheduled`, the scheduler
/// role releases them when the test's clock reaches their time, the fan-out delivers them.
/// `make test` runs it on the shared cluster (HERALD_TEST_SCHEDULE_SUITES=1), not in the main
/// pass: its private brokers, one per test, would lengthen the pass that is already longest.
@Suite(
    "Scheduling", .heavy, .serialized,
    .enabled(if: ProcessInfo.processInfo.environment["HERALD_TEST_SCHEDULE_SUITES"] == "1", "make test sets HERALD_TEST_SCHEDULE_SUITES=1")
)
struct SchedulingTests {
    /// A Saturday before Europe's switch to summer time (01:00Z on Sunday 29 March 2026).
    static let start = ISO8601Timestamp.parse("2026-03-28T12:00:00Z")!

    static func morning(_ id: String, _ audience: Audience = .expression(.tag("World"), source: "World"), _ schedule: EventSchedule)
        -> NotificationEvent
    {
        NotificationEvent(id: id, audience: audience, properties: ["News_English": "Good morning"], schedule: schedule)
    }

    @Test("sendAt: scheduled, nothing before its time, released once at its time to its audience; a cancel afterwards changes nothing")
    func releasedAtItsTime() async throws {
        let clock = TestClock(Self.start)
        try await Self.withScheduling(clock) { harness in
            try await harness.seed([
                testRegistration("w1", tags: ["World"]), testRegistration("w2", tags: ["World"]), testRegistration("s1", tags: ["Sports"]),
            ])
            harness.startRoles(scheduler: true)
            let sendAt = Self.start.addingTimeInterval(3_600)
            _ = try await harness.publish(Self.morning("brief", .expression(.tag("World"), source: "World"), .at(sendAt)))
            let scheduled = try await harness.status("brief") { $0.state == .scheduled }
            #expect(scheduled.schedule?.sendAt == "2026-03-28T13:00:00Z" && scheduled.schedule?.releases.map(\.releaseAt) == [sendAt])

            clock.advance(by: 3_599)
            try await Task.sleep(for: .milliseconds(1_500))
            #expect(try await harness.currentStatus("brief")?.state == .scheduled)

            clock.set(sendAt)
            let done = try await harness.status("brief") { $0.state == .completed }
            #expect(done.targets.total == 2)
            let deliveries = try await harness.deliveries(eventId: "brief")
            #expect(deliveries.map(\.registrationId).sorted() == ["w1", "w2"])

            // Cancelling after the release is too late: nothing changes.
            try await harness.requestCancel("brief")
            try await Task.sleep(for: .milliseconds(1_500))
            #expect(try await harness.currentStatus("brief")?.state == .completed)
            // One release record on the events topic next to the scheduling one.
            let records = try await harness.records(harness.configuration.topics.events)
            #expect(records.filter { $0.key == Array("brief".utf8) }.count == 2)
            // The late cancel request is followed by a tombstone, so compaction removes it.
            var latest: KafkaMessage?
            for _ in 0..<40 {
                latest = try await harness.records(harness.configuration.topics.scheduled).last { $0.key == Array("brief".utf8) }
                if latest?.value == nil { break }
                try await Task.sleep(for: .milliseconds(250))
            }
            #expect(latest != nil && latest?.value == nil)
        }
    }

    @Test(
        "herald reindex finds Redis equal to the log after every kind of event: immediate, replayed, sendAt released, sendAtLocal released, cancelled, dead-lettered"
    )
    func statusesEqualTheLogAfterEveryKindOfEvent() async throws {
        let clock = TestClock(Self.start)
        try await Self.withScheduling(clock) { harness in
            try await harness.seed([testRegistration("w1", tags: ["World"])])
            harness.startRoles(scheduler: true)
            let immediate = NotificationEvent(id: "now", audience: .broadcast, properties: ["News_English": "x"])
            _ = try await harness.publish(immediate)
            _ = try await harness.publish(immediate)  // replayed: skipped as a duplicate
            _ = try await harness.publish(Self.morning("at", .broadcast, .at(Self.start.addingTimeInterval(600))))
            _ = try await harness.publish(Self.morning("local", .broadcast, .localTime(LocalDateTime.parse("2026-03-29T09:00")!)))
            _ = try await harness.publish(Self.morning("cancel", .broadcast, .at(Self.start.addingTimeInterval(600))))
            try await harness.publishRaw(Array(#"{"id":"bad","tags":"World &&"}"#.utf8), key: "bad")
            _ = try await harness.status("now") { $0.state == .completed }
            for id in ["at", "local", "cancel"] { _ = try await harness.status(id) { $0.state == .scheduled } }
            try await harness.requestCancel("cancel")
            _ = try await harness.status("cancel") { $0.state == .cancelled }
            clock.advance(by: 600)
            _ = try await harness.status("at") { $0.state == .completed }
            // Past 09:00 in the last zone (UTC-12): every zone's part is released.
            clock.set(ISO8601Timestamp.parse("2026-03-29T21:01:00Z")!)
            let local = try await harness.status("local") { $0.state == .released }
            for part in local.schedule?.releases ?? [] { _ = try await harness.status(part.eventId) { $0.state.isTerminal } }
            _ = try await harness.status("bad") { $0.state == .rejected }

            let summary = try await StatusRebuilder(configuration: harness.configuration, pool: harness.pool).run(
                logger: PipelineHarness.logger)
            #expect(summary.mismatched == 0, "\(summary)")
        }
    }

    @Test("two hubs schedule events with the same id: a cancel in one leaves the other, which is released to its own devices")
    func schedulesOfTwoHubs() async throws {
        let clock = TestClock(Self.start)
        let sports = HubName("sports")!
        try await Self.withScheduling(clock) { harness in
            var fan = testRegistration("s1", tags: ["World"])
            fan.hub = sports
            try await harness.seed([testRegistration("w1", tags: ["World"]), fan])
            try await harness.createHub(sports)
            harness.startRoles(scheduler: true)
            let at = EventSchedule.at(Self.start.addingTimeInterval(600))
            var sportsEvent = Self.morning("kickoff", .broadcast, at)
            sportsEvent.hub = sports
            _ = try await harness.publish(Self.morning("kickoff", .broadcast, at))
            _ = try await harness.publish(sportsEvent)
            _ = try await harness.status("kickoff") { $0.state == .scheduled }
            _ = try await harness.status("kickoff", hub: sports) { $0.state == .scheduled }
            try await harness.requestCancel("kickoff", hub: sports)
            let cancelled = try await harness.status("kickoff", hub: sports) { $0.state == .cancelled }
            #expect(cancelled.hub == sports)
            #expect(try await harness.currentStatus("kickoff")?.state == .scheduled, "the default hub's kickoff is untouched")
            clock.advance(by: 601)
            let released = try await harness.status("kickoff") { $0.state == .completed }
            #expect(released.targets.total == 1)
            #expect(try await harness.deliveries(eventId: "kickoff").map(\.registrationId) == ["w1"])
            #expect(try await harness.deliveries(eventId: "kickoff", hub: sports).isEmpty)
            #expect(try await harness.currentStatus("kickoff", hub: sports)?.state == .cancelled)
        }
    }

    @Test("cancelled before its time: status cancelled, nothing released, nothing delivered")
    func cancelledBefore() async throws {
        let clock = TestClock(Self.start)
        try await Self.withScheduling(clock) { harness in
            try await harness.seed([testRegistration("w1", tags: ["World"])])
            harness.startRoles(scheduler: true)
            _ = try await harness.publish(Self.morning("embargo", .broadcast, .at(Self.start.addingTimeInterval(600))))
            _ = try await harness.status("embargo") { $0.state == .scheduled }
            try await harness.requestCancel("embargo")
            let cancelled = try await harness.status("embargo") { $0.state == .cancelled }
            #expect(cancelled.schedule?.releases.map(\.state) == [.cancelled])
            clock.advance(by: 3_600)
            try await Task.sleep(for: .milliseconds(1_500))
            #expect(try await harness.currentStatus("embargo")?.state == .cancelled)
            #expect(try await harness.deliveries(eventId: "embargo").isEmpty)
        }
    }

    @Test(
        "a cancel request read before its schedule record (the API sends it once the status says scheduled) cancels the schedule when it comes"
    )
    func cancelBeforeTheScheduleRecord() async throws {
        let clock = TestClock(Self.start)
        try await Self.withScheduling(clock) { harness in
            try await harness.seed([testRegistration("w1", tags: ["World"])])
            harness.startRoles(scheduler: true)
            let scheduler = try #require(harness.scheduler)
            let deadline = ContinuousClock.now + .seconds(60)
            while scheduler.releasingPartitions.count < 3 {
                try #require(ContinuousClock.now < deadline, "the scheduler did not read its partitions within 60 s")
                try await Task.sleep(for: .milliseconds(100))
            }
            // The planner's status comes before its transaction commits the schedule record: a
            // cancel request can reach the topic first.
            let event = Self.morning("early", .broadcast, .at(Self.start.addingTimeInterval(600)))
            let pending = ScheduledEvent(
                eventId: "early", event: event, scheduledAt: Self.start,
                releases: [ScheduledRelease(eventId: "early", releaseAt: Self.start.addingTimeInterval(600))])
            let connection = RedisConnection(configuration: harness.configuration.redis)
            defer { connection.close() }
            _ = try await connection.send(
                .set(
                    harness.configuration.layout.statusKey(eventId: "early"),
                    StatusCoding.encode(StatusRecord.scheduled(pending, at: Self.start))))
            try await harness.requestCancel("early")
            try await Task.sleep(for: .milliseconds(1_500))
            _ = try await harness.publish(event)
            let cancelled = try await harness.status("early") { $0.state == .cancelled }
            #expect(cancelled.schedule?.releases.map(\.state) == [.cancelled])
            clock.advance(by: 3_600)
            try await Task.sleep(for: .milliseconds(1_500))
            #expect(try await harness.currentStatus("early")?.state == .cancelled)
            #expect(try await harness.deliveries(eventId: "early").isEmpty)
        }
    }

    @Test("sendAtLocal over three zones and devices without one, across a DST change: each device once, at its own 07:30")
    func localTime() async throws {
        let clock = TestClock(Self.start)
        try await Self.withScheduling(clock) { harness in
            let zones = ["tokyo": "Asia/Tokyo", "berlin": "Europe/Berlin", "newyork": "America/New_York"]
            var registrations: [Registration] = []
            for (name, zone) in zones {
                for n in 1...2 {
                    var registration = testRegistration("\(name)\(n)", tags: ["World"])
                    registration.timeZone = zone
                    registrations.append(registration)
                }
            }
            registrations.append(testRegistration("nozone1", tags: ["World"]))
            registrations.append(testRegistration("berlin-sport", tags: ["Sports"]))
            try await harness.seed(registrations)
            harness.startRoles(scheduler: true)
            let local = LocalDateTime(year: 2026, month: 3, day: 29, hour: 7, minute: 30)
            _ = try await harness.publish(Self.morning("digest", .expression(.tag("World"), source: "World"), .localTime(local)))
            let scheduled = try await harness.status("digest") { $0.state == .scheduled }
            let releases = scheduled.schedule?.releases ?? []
            #expect(releases.count > 30)

            // The instants that matter here, in order: Tokyo, the default zone (UTC), Berlin
            // after its change to summer time, New York.
            let expected: [(at: String, devices: [String])] = [
                ("2026-03-28T22:30:00Z", ["tokyo1", "tokyo2"]),
                ("2026-03-29T05:30:00Z", ["berlin1", "berlin2"]),
                ("2026-03-29T07:30:00Z", ["nozone1"]),
                ("2026-03-29T11:30:00Z", ["newyork1", "newyork2"]),
            ]
            var seen: [String] = []
            for step in expected {
                let instant = ISO8601Timestamp.parse(step.at)!
                clock.set(instant.addingTimeInterval(-1))
                try await Task.sleep(for: .milliseconds(800))
                #expect(try await Self.delivered(harness).sorted() == seen.sorted(), "before \(step.at)")
                clock.set(instant)
                let part = try #require(releases.first { $0.releaseAt == instant }, "a release at \(step.at)")
                _ = try await harness.status(part.eventId) { $0.state == .completed }
                seen += step.devices
                #expect(try await Self.delivered(harness).sorted() == seen.sorted(), "at \(step.at)")
            }
            clock.set(releases.last!.releaseAt)
            let released = try await harness.status("digest") { $0.state == .released }
            // Written into the status prepared ahead, at the release.
            #expect(released.timings.completedAt == releases.last!.releaseAt)
            #expect(try await Self.delivered(harness).sorted() == seen.sorted())
        }
    }

    @Test("the schedule index lost from Redis is read again from the topic; nothing is lost")
    func indexRebuilt() async throws {
        let clock = TestClock(Self.start)
        try await Self.withScheduling(clock) { harness in
            try await harness.seed([testRegistration("w1", tags: ["World"])])
            harness.startRoles(scheduler: true)
            for id in ["a", "b", "c"] {
                _ = try await harness.publish(Self.morning(id, .broadcast, .at(Self.start.addingTimeInterval(600))))
            }
            for id in ["a", "b", "c"] { _ = try await harness.status(id) { $0.state == .scheduled } }
            try await harness.requestCancel("b")
            _ = try await harness.status("b") { $0.state == .cancelled }
            let connection = RedisConnection(configuration: harness.configuration.redis)
            defer { connection.close() }
            #expect(try await connection.deleteKeys(matching: "\(harness.configuration.layout.prefix):{sched:*") > 0)
            try await Task.sleep(for: .milliseconds(2_500))
            clock.advance(by: 600)
            for id in ["a", "c"] {
                let done = try await harness.status(id) { $0.state == .completed }
                #expect(done.targets.total == 1)
            }
            #expect(try await harness.currentStatus("b")?.state == .cancelled)
            #expect(try await harness.deliveries(eventId: "b").isEmpty)
        }
    }

    @Test(
        "Redis killed under the scheduler with schedules due: the role keeps running, reports the stall, and releases each schedule once when Redis is back"
    )
    func redisLossDoesNotEndTheScheduler() async throws {
        let clock = TestClock(Self.start)
        try await Self.withScheduling(clock) { harness in
            // The cluster pass shares one Redis Cluster with other suites; ClusterFaultTests
            // kills its own masters there.
            guard harness.redis.canRestart else { return }
            let registration = testRegistration("w1", tags: ["World"])
            try await harness.seed([registration])
            harness.startRoles(scheduler: true)
            let scheduler = try #require(harness.scheduler)
            for id in ["due1", "due2"] {
                _ = try await harness.publish(Self.morning(id, .broadcast, .at(Self.start.addingTimeInterval(600))))
            }
            for id in ["due1", "due2"] { _ = try await harness.status(id) { $0.state == .scheduled } }

            // Redis goes away (connections reset) while the schedules fall due.
            harness.redis.stop()
            clock.advance(by: 600)
            try await waitUntilTrue("the scheduler reported its failure on the progress board") {
                harness.context.progress.stalled(longerThan: .zero).contains { $0.name == "scheduler" }
            }
            #expect(harness.rolesStillRunning, "a role ended when Redis went away")

            // An empty Redis comes back on the same port (the harness seeds the index the
            // indexer role would rebuild): the scheduler reads its partitions again and
            // releases both schedules, once.
            try harness.redis.restart()
            try await harness.seed([registration])
            _ = try await harness.index.markBuilt()
            for id in ["due1", "due2"] {
                #expect(try await harness.status(id) { $0.state == .completed }.targets.total == 1)
            }
            #expect(harness.rolesStillRunning)
            #expect(!scheduler.releasingPartitions.isEmpty)
            let releases = try await harness.records(harness.configuration.topics.events).filter {
                $0.header(EventPlanner.releaseHeader) != nil
            }
            for id in ["due1", "due2"] { #expect(releases.filter { $0.key == Array(id.utf8) }.count == 1, "\(id)") }
        }
    }

    @Test("two schedulers share the partitions; when one leaves, the other takes its partitions over: each schedule released once")
    func twoSchedulersShare() async throws {
        let clock = TestClock(Self.start)
        try await Self.withScheduling(clock) { harness in
            try await harness.seed([testRegistration("w1", tags: ["World"])])
            harness.startRoles(scheduler: true)
            let second = SchedulerService(configuration: harness.configuration, logger: PipelineHarness.logger)
            let secondRun = Task { try await second.run() }
            let first = try #require(harness.scheduler)
            // Both own partitions before anything is scheduled.
            let deadline = ContinuousClock.now + .seconds(60)
            while first.releasingPartitions.isEmpty || second.releasingPartitions.isEmpty
                || first.releasingPartitions.count + second.releasingPartitions.count < 3
            {
                try #require(ContinuousClock.now < deadline, "the two schedulers did not share the partitions within 60 s")
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(first.releasingPartitions.isDisjoint(with: second.releasingPartitions))
            let ids = (0..<12).map { "share\($0)" }
            #expect(Set(ids.map(harness.configuration.topics.scheduledPartition(of:))).count == 3)
            for (n, id) in ids.enumerated() {
                let at = Self.start.addingTimeInterval(n < 6 ? 600 : 1_200)
                _ = try await harness.publish(Self.morning(id, .broadcast, .at(at)))
            }
            for id in ids { _ = try await harness.status(id) { $0.state == .scheduled } }

            clock.advance(by: 600)
            for id in ids.prefix(6) { #expect(try await harness.status(id) { $0.state == .completed }.targets.total == 1) }
            // The second leaves; the first takes its partitions over and releases the rest.
            second.stop()
            try await secondRun.value
            clock.advance(by: 600)
            for id in ids.suffix(6) { #expect(try await harness.status(id) { $0.state == .completed }.targets.total == 1) }
            #expect(first.releasingPartitions == [0, 1, 2])

            let releases = try await harness.records(harness.configuration.topics.events).filter {
                $0.header(EventPlanner.releaseHeader) != nil
            }
            for id in ids { #expect(releases.filter { $0.key == Array(id.utf8) }.count == 1, "\(id)") }
            let deliveries = try await harness.records(harness.configuration.topics.deliveries)
            #expect(deliveries.count == ids.count)
        }
    }

    @Test("a schedule too far back or too far ahead goes to the dead-letter topic naming sendAt")
    func badScheduleDeadLettered() async throws {
        let clock = TestClock(Self.start)
        try await Self.withScheduling(clock) { harness in
            harness.startRoles()
            try await harness.publishRaw(Array(#"{"id":"late","sendAt":"2026-03-28T10:00:00Z"}"#.utf8), key: "late", partition: 0)
            try await harness.publishRaw(Array(#"{"id":"far","sendAt":"2027-03-28T10:00:00Z"}"#.utf8), key: "far", partition: 0)
            var letters: [KafkaMessage] = []
            for _ in 0..<60 where letters.count < 2 {
                try await Task.sleep(for: .milliseconds(500))
                letters = try await harness.records(harness.configuration.topics.eventsDeadLetters)
            }
            #expect(letters.count == 2)
            for letter in letters {
                let envelope = try JSONValue.parse(letter.value ?? [])
                #expect(envelope["reason"] == .string("invalid_schedule"))
                #expect(String(describing: envelope["message"]).contains("sendAt"))
            }
        }
    }

    /// A pipeline whose planner and scheduler read `clock`.
    static func withScheduling(_ clock: TestClock, body: (PipelineHarness) async throws -> Void) async throws {
        try await withPipelineHarness(slots: 8, configure: { $0.scheduleClock = { clock.date } }, body: body)
    }

    /// Registrations with a delivery of any part of `digest` so far.
    static func delivered(_ harness: PipelineHarness) async throws -> [String] {
        try await harness.records(harness.configuration.topics.deliveries).compactMap { message in
            guard let value = message.value, let record = try? DeliveryRecord.decode(value), record.eventId.hasPrefix("digest@") else {
                return nil
            }
            return record.registrationId
        }
    }
}

extension PipelineHarness {
    /// The status in Redis now, if any.
    func currentStatus(_ eventId: String, hub: HubName = .default) async throws -> StatusRecord? {
        try await StatusReader(pool: pool, layout: configuration.layout).status(eventId: eventId, hub: hub)
    }

    /// Waits until the status of `eventId` satisfies `condition`; fails only when the status stays
    /// the same for `stallLimit`.
    func status(
        _ eventId: String, hub: HubName = .default, stallLimit: Duration = .seconds(120), _ condition: (StatusRecord) -> Bool
    ) async throws -> StatusRecord {
        try await waitWhileProgressing("the status of \(eventId) reaching the expected state", stallLimit: stallLimit) {
            () async throws -> ProgressCheck<StatusRecord?, StatusRecord> in
            let status = try await currentStatus(eventId, hub: hub)
            if let status, condition(status) { return .done(status) }
            return .waiting(status)
        }
    }

    /// What `DELETE /v1/notifications/{id}` writes: a cancel request on the schedule topic.
    func requestCancel(_ eventId: String, hub: HubName = .default) async throws {
        let key = hub.recordKey(eventId)
        let record = ScheduleRecord.cancel(eventId: key, requestedAt: Date())
        try await publishRaw(
            Array(try JSONEncoder().encode(record)), key: key, partition: configuration.topics.scheduledPartition(of: key),
            topic: configuration.topics.scheduled)
    }
}
