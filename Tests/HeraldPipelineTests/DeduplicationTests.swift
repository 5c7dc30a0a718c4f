import Foundation
import HeraldDomain
import HeraldKafka
import HeraldPipeline
import HeraldRedis
import HeraldTestSupport
import Testing

@Suite("De-duplication, expiry and shutdown", .heavy, .serialized)
struct DeduplicationTests {
    static func event(_ id: String, text: String = "hello", expiresAt: Date? = nil) -> NotificationEvent {
        NotificationEvent(
            id: id, audience: .expression(.tag("World"), source: "World"), properties: ["News_English": text], expiresAt: expiresAt)
    }

    @Test func republishedIdsFanOutOnceAndExpiredEventsNotAtAll() async throws {
        try await withPipelineHarness(slots: 8) { harness in
            try await harness.seed((0..<50).map { testRegistration("r\($0)", tags: ["World"]) })

            // Claims left by an earlier attempt: "retry" was claimed by the very record it is
            // about to be read from (partition 0, offset 0 of a fresh topic), so it proceeds;
            // "taken" was claimed by another record, so it is a duplicate.
            let connection = try await RedisConnection.connect(configuration: harness.configuration.redis)
            let layout = harness.configuration.layout
            _ = try await connection.pipeline([
                .set(layout.eventClaimKey(eventId: "retry"), "0:0"),
                .set(layout.eventClaimKey(eventId: "taken"), "1:99"),
            ])
            connection.close()
            let first = try await harness.publishRaw(Self.event("retry").canonicalJSON(), key: "retry", partition: 0)
            #expect(first.offset == 0)
            try await harness.publishRaw(Self.event("taken").canonicalJSON(), key: "taken", partition: 0)

            harness.startRoles()
            _ = try await harness.publish(Self.event("dup", text: "first"))
            _ = try await harness.publish(Self.event("dup", text: "second"))
            _ = try await harness.publish(Self.event("same"))
            _ = try await harness.publish(Self.event("same"))
            _ = try await harness.publish(Self.event("old", expiresAt: Date().addingTimeInterval(-60)))
            _ = try await harness.publish(Self.event("marker"))

            #expect(try await harness.finalStatus("retry").targets.total == 50)
            #expect(try await harness.finalStatus("dup").targets.total == 50)
            #expect(try await harness.finalStatus("same").targets.total == 50)
            let expired = try await harness.finalStatus("old")
            #expect(expired.state == .expired)
            #expect(expired.tasks.planned == 0)
            _ = try await harness.finalStatus("marker")
            try await harness.stopRoles()

            let all = try await harness.records(harness.configuration.topics.deliveries).map { try DeliveryRecord.decode($0.value ?? []) }
            let dup = all.filter { $0.eventId == "dup" }
            #expect(dup.count == 50)
            #expect(dup.allSatisfy { $0.payload.contains("first") })
            #expect(all.filter { $0.eventId == "old" }.isEmpty)
            #expect(all.filter { $0.eventId == "taken" }.isEmpty)
            #expect(all.filter { $0.eventId == "retry" }.count == 50)
            #expect(all.filter { $0.eventId == "same" }.count == 50)
            // The reused id with other content is dead-lettered; the identical retry, and the
            // record whose claim predates fingerprints ("taken"), are skipped silently.
            let letters = try await harness.records(harness.configuration.topics.eventsDeadLetters)
            #expect(Set(letters.compactMap { $0.headers.first { $0.key == DeadLetter.sourceHeader }?.value }).count == 1)
            let envelope = try JSONValue.parse(letters.first?.value ?? [])
            #expect(envelope["reason"] == .string("duplicate_id_conflict"))
            #expect(envelope["eventId"] == .string("dup"))
            let reader = StatusReader(pool: harness.pool, layout: layout)
            #expect(try await reader.status(eventId: "taken") == nil)
        }
    }

    @Test func gracefulShutdownCommitsWhatWasDoneAndARestartRedoesNothing() async throws {
        try await withPipelineHarness(slots: 8) { harness in
            try await harness.seed((0..<200).map { testRegistration("r\($0)", tags: ["World"]) })
            harness.startRoles()
            _ = try await harness.publish(Self.event("g-1"))
            _ = try await harness.publish(Self.event("g-2", text: "other"))
            _ = try await harness.finalStatus("g-1")
            _ = try await harness.finalStatus("g-2")
            try await harness.stopRoles()

            // Every consumed offset was committed: the groups stand at the end of their topics.
            let topics = harness.configuration.topics
            for (group, topic, partitions) in [
                (harness.configuration.plannerGroup, topics.events, topics.eventsPartitions),
                (harness.configuration.fanoutGroup, topics.tasks, topics.tasksPartitions),
            ] {
                let consumer = try KafkaConsumer(
                    configuration: KafkaConsumerConfiguration(bootstrapServers: harness.broker.bootstrapServers, groupId: group))
                let targets = (0..<partitions).map { KafkaTopicPartition(topic: topic, partition: $0) }
                let committed = try await consumer.committed(targets)
                for (partition, offset) in zip(targets, committed) {
                    let marks = try await consumer.queryWatermarkOffsets(topic: topic, partition: partition.partition)
                    // Past the last record; the commit marker may sit one offset beyond.
                    #expect(
                        marks.high == 0 || offset.offset >= marks.high - 1,
                        "\(group) left \(partition) at \(offset.offset) of \(marks.high)")
                }
            }
            let before = try await harness.records(topics.deliveries).count
            #expect(before == 400)

            // A restarted worker resumes after the committed work: only the new event is delivered.
            harness.startRoles()
            _ = try await harness.publish(Self.event("g-3"))
            _ = try await harness.finalStatus("g-3")
            try await harness.stopRoles()
            let after = try await harness.records(topics.deliveries).map { try DeliveryRecord.decode($0.value ?? []) }
            #expect(after.count == 600)
            #expect(after.filter { $0.eventId == "g-1" }.count == 200)
        }
    }
}

@Suite("Statuses and claims rebuilt from the log", .heavy, .serialized)
struct StatusRebuildTests {
    @Test("after FLUSHALL, the rebuild restores every status and claim byte for byte; a reused id is still a conflict")
    func flushAndRebuild() async throws {
        try await withPipelineHarness(slots: 8) { harness in
            try await harness.seed((0..<20).map { testRegistration("r\($0)", tags: ["World"]) })
            harness.startRoles()
            let events = [
                DeduplicationTests.event("bn-0001"), DeduplicationTests.event("bn-0002", text: "other"),
                DeduplicationTests.event("bn-old", expiresAt: Date().addingTimeInterval(-60)),
            ]
            for event in events { _ = try await harness.publish(event) }
            try await harness.publishRaw(Array(#"{"id":"bn-bad","tags":"World &&"}"#.utf8), key: "bn-bad")
            for event in events { _ = try await harness.finalStatus(event.id!) }
            let layout = harness.configuration.layout
            let keys =
                ["bn-0001", "bn-0002", "bn-old", "bn-bad"].map { layout.statusKey(eventId: $0) }
                + ["bn-0001", "bn-0002", "bn-old"].map { layout.eventClaimKey(eventId: $0) }
            func snapshot() async throws -> [[UInt8]?] {
                try await harness.pool.withConnection { try await $0.pipeline(keys.map { RedisCommand.get($0) }) }.map {
                    try $0.get().bytes
                }
            }
            // The rejected status is written by the planner after the batch; wait for it.
            var before = try await snapshot()
            for _ in 0..<100 where before.contains(where: { $0 == nil }) {
                try await Task.sleep(for: .milliseconds(100))
                before = try await snapshot()
            }
            try #require(before.allSatisfy { $0 != nil }, "\(before)")
            try await harness.stopRoles()

            // FLUSHALL of this test's keys (the Redis may be shared: HERALD_TEST_REDIS_URL).
            let prefix = harness.configuration.layout.prefix
            _ = try await harness.pool.withConnection { try await $0.deleteKeys(matching: prefix + ":*") }
            #expect(try await snapshot().allSatisfy { $0 == nil })
            // The planner waits while the index is missing; the full rebuild lets it go on.
            let summary = try #require(try await harness.rebuild().run(token: "test", logger: PipelineHarness.logger)).statuses
            #expect(summary.mismatched == 0)
            #expect(summary.statuses == 4)
            #expect(summary.claims == 3)
            let after = try await snapshot()
            for (key, (old, new)) in zip(keys, zip(before, after)) {
                #expect(
                    old == new, "\(key): \(String(decoding: old ?? [], as: UTF8.self)) became \(String(decoding: new ?? [], as: UTF8.self))"
                )
            }
            // A second rebuild finds Redis equal to the log and writes the same digest.
            let again = try await StatusRebuilder(configuration: harness.configuration, pool: harness.pool).run()
            #expect(again.digest == summary.digest)
            #expect(again.mismatched == 0)

            // The restored claim still stops a reused id: dead-lettered, not delivered again.
            try await harness.seed((0..<20).map { testRegistration("r\($0)", tags: ["World"]) })
            harness.startRoles()
            _ = try await harness.publish(DeduplicationTests.event("bn-0001", text: "changed"))
            _ = try await harness.publish(DeduplicationTests.event("marker"))
            _ = try await harness.finalStatus("marker")
            try await harness.stopRoles()
            let letters = try await harness.records(harness.configuration.topics.eventsDeadLetters)
            let reasons = try letters.map { try JSONValue.parse($0.value ?? [])["reason"] }
            #expect(reasons.contains(.string("duplicate_id_conflict")))
            let delivered = try await harness.deliveries(eventId: "bn-0001")
            #expect(delivered.count == 20)
            #expect(delivered.allSatisfy { !$0.payload.contains("changed") })
        }
    }
}
