import Foundation
import HeraldDomain
import HeraldKafka
import HeraldPipeline
import HeraldRegistry
import HeraldTestSupport
import Testing
import HeraldStreams

/// Inputs that once stopped delivery for everyone: each must cost only itself.
@Suite("Poison inputs", .heavy, .serialized)
struct PoisonInputTests {
    @Test("an amplifying template is skipped for its device; the rest of the event and later events deliver")
    func amplifyingTemplateIsSkipped() async throws {
        try await withPipelineHarness(slots: 8) { harness in
            // Written straight to the index, as a registration made before the
            // registration-time check (or produced to the topic directly) would be.
            let fields = (0..<1_024).map { #""k\#($0)":"$(msg)""# }.joined(separator: ",")
            let amplifying = Registration(
                registrationId: "amp", platform: .apns, handle: String(repeating: "ef", count: 32), tags: ["Sports"],
                template: RegistrationTemplate(name: "amp", body: "{" + fields + "}"), version: 1
            )
            var plain = testRegistration("plain", tags: ["Sports"], language: "English")
            plain.template = RegistrationTemplate(name: "plain", body: #"{"aps":{"alert":"$(msg, 40)"}}"#)
            try await harness.seed([amplifying, plain])
            harness.startRoles()

            let hostile = NotificationEvent(
                id: "amp-1", audience: .expression(.tag("Sports"), source: "Sports"),
                properties: ["msg": String(repeating: "m", count: 1_000)]
            )
            _ = try await harness.publish(hostile)
            let later = NotificationEvent(
                id: "amp-2", audience: .expression(.tag("Sports"), source: "Sports"), properties: ["msg": "Final score"]
            )
            _ = try await harness.publish(later)

            let status = try await harness.finalStatus("amp-1")
            let laterStatus = try await harness.finalStatus("amp-2")
            try await harness.stopRoles()

            #expect(status.state == .completed)
            #expect(status.targets.total == 1)
            #expect(status.skipped == 1)
            let delivered = try await harness.deliveries(eventId: "amp-1")
            #expect(delivered.map(\.registrationId) == ["plain"])
            #expect(delivered.first?.payload == #"{"aps":{"alert":"mmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmm"}}"#)

            // Its 16 KB of fixed text never fits, whatever the value: skipped again, and the
            // event after it is delivered all the same.
            #expect(laterStatus.state == .completed)
            #expect(laterStatus.targets.total == 1)
            #expect(laterStatus.skipped == 1)
            #expect(try await harness.deliveries(eventId: "amp-2").map(\.registrationId) == ["plain"])

            // What `herald stats` reads back from the log: the skip, with its reason.
            let statistics = try await EventStatistics.read(
                topics: harness.configuration.topics, bootstrapServers: harness.broker.bootstrapServers, eventId: "amp-1"
            )
            let stats = try #require(statistics.events().first { $0.eventId == "amp-1" })
            #expect(stats.state == "completed")
            #expect(stats.skippedByReason == ["payload_too_large": 1])
            #expect(stats.deliveryRecords == 1)
            #expect(stats.latencyMs != nil)
        }
    }

    @Test("header templates stored before the registration check cost only their device: too large is skipped, line breaks are blanked")
    func hostileHeaderTemplates() async throws {
        try await withPipelineHarness(slots: 4) { harness in
            // Written straight to the index, as registrations made before the check would be.
            let headers = Dictionary(uniqueKeysWithValues: (0..<32).map { ("apns-x-\($0)", "$(big)") })
            let large = Registration(
                registrationId: "large", platform: .apns, handle: String(repeating: "ab", count: 32), tags: ["Sports"],
                template: RegistrationTemplate(name: "large", body: #"{"aps":{"alert":"hi"}}"#, headers: headers), version: 1
            )
            let split = Registration(
                registrationId: "split", platform: .apns, handle: String(repeating: "cd", count: 32), tags: ["Sports"],
                template: RegistrationTemplate(
                    name: "split", body: #"{"aps":{"alert":"hi"}}"#, headers: ["apns-collapse-id": "a\r\nx-evil: 1"]),
                version: 1
            )
            try await harness.seed([large, split, testRegistration("plain", tags: ["Sports"], language: "English")])
            harness.startRoles()
            _ = try await harness.publish(
                NotificationEvent(
                    id: "hdr-1", audience: .expression(.tag("Sports"), source: "Sports"),
                    properties: ["big": String(repeating: "b", count: 300), "News_English": "Final score"]
                ))
            let status = try await harness.finalStatus("hdr-1")
            try await harness.stopRoles()

            #expect(status.state == .completed)
            #expect(status.skipped == 1)
            let delivered = try await harness.deliveries(eventId: "hdr-1")
            #expect(delivered.map(\.registrationId).sorted() == ["plain", "split"])
            let blanked = try #require(delivered.first { $0.registrationId == "split" })
            #expect(blanked.headers["apns-collapse-id"] == "a  x-evil: 1")
            #expect(HeraldDomain.HeaderFieldRules.problem(with: blanked.headers) == nil)
        }
    }

    @Test("an 800,000-byte malformed event is dead-lettered with its size and hash; events after it deliver")
    func oversizeMalformedEventIsDeadLettered() async throws {
        try await withPipelineHarness(slots: 4) { harness in
            try await harness.seed([testRegistration("r1", tags: ["World"])])
            harness.startRoles()
            let original =
                Array("{\"id\":\"big-1\",\"tags\":\"World &&\",\"x\":\"".utf8) + Array(repeating: UInt8(ascii: "x"), count: 800_000)
            for partition: Int32 in [0, 1] {
                _ = try await harness.publish(
                    NotificationEvent(
                        id: "before-\(partition)", audience: .expression(.tag("World"), source: "World"), properties: ["News_English": "a"]
                    ))
                try await harness.publishRaw(original, key: "big", partition: partition)
            }
            _ = try await harness.publish(
                NotificationEvent(id: "after-1", audience: .expression(.tag("World"), source: "World"), properties: ["News_English": "b"]))
            for id in ["before-0", "before-1", "after-1"] {
                let status = try await harness.finalStatus(id)
                #expect(status.state == .completed, "\(id)")
                #expect(status.targets.total == 1, "\(id)")
            }
            let letters = try await harness.records(harness.configuration.topics.eventsDeadLetters)
            // One per poison record (an aborted attempt's copy may show next to it on Tansu).
            #expect(Set(letters.compactMap { $0.headers.first { $0.key == DeadLetter.sourceHeader }?.value }).count == 2)
            for letter in letters {
                #expect((letter.value?.count ?? .max) < 100_000)
                let envelope = try JSONValue.parse(letter.value ?? [])
                #expect(envelope["reason"] == .string("too_large"))
                #expect(envelope["originalBytes"] == .number(String(original.count)))
                #expect(envelope["originalTruncated"] == .bool(true))
                guard case .string(let base64)? = envelope["originalBase64"], let kept = Data(base64Encoded: base64) else {
                    Issue.record("no original prefix in \(envelope)")
                    continue
                }
                #expect(Array(kept) == Array(original.prefix(DeadLetter.maxInlineOriginalBytes)))
                guard case .string(let digest)? = envelope["originalSha256"] else {
                    Issue.record("no hash")
                    continue
                }
                #expect(digest.count == 64)
            }
            try await harness.stopRoles()
        }
    }

    @Test(
        "unreadable and empty tasks on the express and bulk task topics are dead-lettered; the good ones deliver and the offsets move past them"
    )
    func unreadableTaskIsDeadLettered() async throws {
        try await withPipelineHarness(slots: 4) { configuration in
            // Narrow events go through the express topic, where the poison is put.
            configuration.plannerDeliversNarrowEvents = false
        } body: { harness in
            try await harness.seed([testRegistration("r1", tags: ["World", "$UserId:{alice}"])])
            harness.startRoles()
            let expressTopic = harness.configuration.topics.expressTasks
            func notifyAlice(_ id: String) async throws {
                _ = try await harness.publish(
                    NotificationEvent(
                        id: id, audience: .expression(.tag("$UserId:{alice}"), source: "$UserId:{alice}"), properties: ["News_English": id]
                    ))
            }
            try await notifyAlice("one-1")
            _ = try await harness.finalStatus("one-1")
            var poisonOffsets: [Int64] = []
            // A task that does not decode, and one with no value at all (a tombstone).
            for (partition, value): (Int32, [UInt8]?) in [(0, Array(#"{"eventId":"broken","taskIndex":"#.utf8)), (1, nil)] {
                let report = try await harness.publishRaw(value, key: "poison", partition: partition, topic: expressTopic)
                poisonOffsets.append(report.offset)
            }
            try await notifyAlice("one-2")
            try await notifyAlice("one-3")
            // The bulk lanes' topic: a poison on every partition, then a broadcast.
            let bulkTopic = harness.configuration.topics.tasks
            for partition in 0..<Int32(harness.configuration.topics.tasksPartitions) {
                try await harness.publishRaw(Array("not a task".utf8), key: "poison", partition: partition, topic: bulkTopic)
            }
            _ = try await harness.publish(NotificationEvent(id: "bc-1", audience: .broadcast, properties: ["News_English": "all"]))
            for id in ["one-1", "one-2", "one-3", "bc-1"] {
                let status = try await harness.finalStatus(id)
                #expect(status.state == .completed, "\(id)")
                #expect(Set(try await harness.deliveries(eventId: id).map(\.deliveryId)).count == 1, "\(id)")
            }
            // One dead letter per poison record. On Tansu a dead letter written by a transaction
            // that was then aborted stays visible next to the retry's (docs/topics.md), so the
            // letters are counted by the source record they name.
            let letters = try await harness.records(harness.configuration.topics.eventsDeadLetters)
            var sources: [String: Set<String>] = [:]
            for letter in letters {
                let envelope = try JSONValue.parse(letter.value ?? [])
                #expect(envelope["reason"] == .string("unreadable_task"))
                if case .string(let topic)? = envelope["source"]?["topic"], let source = envelope["source"] {
                    sources[topic, default: []].insert("\(source["partition"] ?? .null)/\(source["offset"] ?? .null)")
                }
            }
            #expect(sources.mapValues(\.count) == [expressTopic: 2, bulkTopic: Int(harness.configuration.topics.tasksPartitions)])
            if harness.broker.isExternal {
                #expect(letters.count == 2 + Int(harness.configuration.topics.tasksPartitions))
            }
            try await harness.stopRoles()
            // The express group committed past every record of its topic, the poison included.
            let committed = try await Self.committed(harness, group: harness.configuration.expressGroup, topic: expressTopic, partitions: 2)
            #expect(zip(committed, poisonOffsets).allSatisfy { $0 > $1 }, "committed \(committed), poison at \(poisonOffsets)")
        }
    }

    static func committed(_ harness: PipelineHarness, group: String, topic: String, partitions: Int) async throws -> [Int64] {
        var configuration = KafkaConsumerConfiguration(bootstrapServers: harness.broker.bootstrapServers, groupId: group)
        configuration.enableAutoCommit = false
        let reader = try KafkaConsumer(configuration: configuration, logger: PipelineHarness.logger)
        let offsets = try await reader.committed((0..<Int32(partitions)).map { KafkaTopicPartition(topic: topic, partition: $0) })
        try await reader.close()
        return offsets.sorted { $0.partition < $1.partition }.map { max(0, $0.offset) }
    }
}
