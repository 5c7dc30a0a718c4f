import Foundation
import HeraldDomain
import HeraldKafka
import HeraldTestSupport
import ServiceLifecycle
import Synchronization
import Testing
@testable import HeraldRegistry

@Suite("Indexer and reindex on a real broker and Redis", .heavy)
struct RegistrationIndexerTests {
    @Test("Redis killed under the indexer with registrations arriving: the role keeps running and indexes them once Redis is back")
    func indexerOutlivesRedis() async throws {
        let broker = try TestBroker()
        let apiRedis = try TestRedis()
        let indexerRedis = try TestRedis()
        // The cluster pass shares one Redis Cluster; ClusterFaultTests kills its own masters.
        guard indexerRedis.canRestart else { return }
        let configuration = RegistryFixtures.configuration()
        let service = try await RegistryFixtures.service(broker: broker, redis: apiRedis, configuration: configuration)
        let indexerIndex = RegistrationIndex(pool: RegistryFixtures.pool(indexerRedis), layout: configuration.layout)
        let indexer = RegistrationIndexer(
            configuration: configuration, consumerConfiguration: RegistryFixtures.consumerConfiguration(broker), index: indexerIndex
        )
        let ended = ManagedAtomicFlag()
        try await withThrowingTaskGroup(of: Void.self) { group in
            let serviceGroup = ServiceGroup(services: [indexer], logger: .init(label: "test"))
            group.addTask {
                defer { ended.set() }
                try await serviceGroup.run()
            }
            for number in 0..<3 {
                _ = try await service.put(
                    RegistryFixtures.registration(service.issueRegistrationId(), tags: ["Before\(number)"]), expectedVersion: nil)
            }
            try await RegistryFixtures.eventually("the indexer to apply the first registrations") { indexer.statistics.applied >= 3 }

            indexerRedis.stop()
            var arrived: [String] = []
            for _ in 0..<3 {
                let id = service.issueRegistrationId()
                arrived.append(id)
                _ = try await service.put(RegistryFixtures.registration(id, tags: ["During"]), expectedVersion: nil)
            }
            try await Task.sleep(for: .seconds(1))  // the indexer meets the dead Redis
            #expect(!ended.isSet, "the indexer ended when Redis went away")

            try indexerRedis.restart()
            try await RegistryFixtures.eventually("the indexer to index the registrations written while Redis was away") {
                try await indexerIndex.idsWithTag("During").sorted() == arrived.sorted()
            }
            #expect(!ended.isSet)
            await serviceGroup.triggerGracefulShutdown()
            try await group.waitForAll()
        }
    }

    @Test("unreadable registry records are handed to the dead letters with their problem, once each, and the rest is indexed")
    func unreadableRecordsAreDeadLettered() async throws {
        let broker = try TestBroker()
        let redis = try TestRedis()
        let configuration = RegistryFixtures.configuration()
        let service = try await RegistryFixtures.service(broker: broker, redis: redis, configuration: configuration)
        let lettered = Mutex<[(offset: Int64, problem: String)]>([])
        let failures = Mutex(1)
        let indexer = RegistrationIndexer(
            configuration: configuration, consumerConfiguration: RegistryFixtures.consumerConfiguration(broker), index: service.index,
            deadLetters: { records in
                // The first hand-over fails, as a broker would: the batch is retried, not committed.
                if failures.withLock({ remaining in
                    defer { remaining -= 1 }
                    return remaining > 0
                }) {
                    throw RegistryRecordError(message: "the dead-letter topic is not answering")
                }
                lettered.withLock { $0 += records.map { ($0.message.offset, $0.problem) } }
            })
        let id = service.issueRegistrationId()
        _ = try await service.put(RegistryFixtures.registration(id, tags: ["Readable"]), expectedVersion: nil)
        let bad = try await service.log.producer.send(
            KafkaOutgoingMessage(topic: configuration.registrationsTopic, key: Array("broken".utf8), value: Array("{not json".utf8)))
        try await withThrowingTaskGroup(of: Void.self) { group in
            let serviceGroup = ServiceGroup(services: [indexer], logger: .init(label: "test"))
            group.addTask { try await serviceGroup.run() }
            try await RegistryFixtures.eventually("the unreadable record to be dead-lettered") { !lettered.withLock { $0.isEmpty } }
            try await RegistryFixtures.eventually("the readable one to be indexed") {
                try await service.index.idsWithTag("Readable") == [id]
            }
            await serviceGroup.triggerGracefulShutdown()
            try await group.waitForAll()
        }
        let letters = lettered.withLock { $0 }
        #expect(letters.map(\.offset) == [bad.offset], "\(letters)")
        #expect(letters.first?.problem.contains("not JSON") == true, "\(letters)")
        #expect(indexer.statistics.ignored >= 1)
    }

    @Test("the indexer rebuilds what the API wrote, ignores replays; reindex after a wipe reproduces the digest")
    func indexerAndReindex() async throws {
        let broker = try TestBroker()
        let apiRedis = try TestRedis()
        let indexerRedis = try TestRedis()
        let configuration = RegistryFixtures.configuration()
        let service = try await RegistryFixtures.service(broker: broker, redis: apiRedis, configuration: configuration)

        // A history with updates, deletes, expiry and installations.
        var ids: [String] = []
        for number in 0..<12 {
            let id = service.issueRegistrationId()
            ids.append(id)
            let expiry: Date? = number == 5 ? Date().addingTimeInterval(3) : nil
            _ = try await service.put(
                RegistryFixtures.registration(id, tags: ["T\(number % 4)", "All"], expiresAt: expiry), expectedVersion: nil)
        }
        let updated = try await service.put(RegistryFixtures.registration(ids[0], tags: ["Changed"]), expectedVersion: nil)
        try await service.delete(id: ids[1], expectedVersion: nil)
        let body = #"{"aps":{"alert":"$(News_English)"}}"#
        _ = try await service.putInstallation(
            Installation(
                installationId: "inst-1", platform: .apns, pushChannel: RegistryFixtures.token(3), tags: ["World"], userId: "alice",
                templates: ["news": InstallationTemplate(body: body), "extra": InstallationTemplate(body: body, tags: ["X"])]
            ), expectedVersion: nil)
        _ = try await service.putInstallation(
            Installation(
                installationId: "inst-1", platform: .apns, pushChannel: RegistryFixtures.token(3), tags: ["World"], userId: "alice",
                templates: ["news": InstallationTemplate(body: body)]
            ), expectedVersion: nil)
        // A replay of an old version, as a retried or duplicated record would be.
        let old = RegistryChange.registration(
            IndexedRegistration(RegistryFixtures.registration(ids[0], tags: ["Stale"], version: updated.version - 1)))
        try await service.log.write(old)

        let indexerIndex = RegistrationIndex(pool: RegistryFixtures.pool(indexerRedis), layout: configuration.layout)
        let indexer = RegistrationIndexer(
            configuration: configuration, consumerConfiguration: RegistryFixtures.consumerConfiguration(broker), index: indexerIndex
        )
        let expectedRecords = 12 + 2 + 3 + 3 + 1  // puts, update, delete, installation (2 regs + doc), (1 reg + tombstone + doc), replay
        try await withThrowingTaskGroup(of: Void.self) { group in
            let serviceGroup = ServiceGroup(services: [indexer], logger: .init(label: "test"))
            group.addTask { try await serviceGroup.run() }
            try await RegistryFixtures.eventually("the indexer to consume every record") {
                let statistics = indexer.statistics
                return statistics.applied + statistics.ignored >= expectedRecords
            }
            // The registration with a 3 s expiry drops out: either it had expired when the indexer
            // applied it (not indexed) or a periodic sweep removed it. The API side is swept below.
            try await RegistryFixtures.eventually("the expiring registration to be swept", seconds: 20) {
                try await indexerIndex.idsWithTag("All").count == 9  // 12, less the updated, the deleted and the expired one
            }
            await serviceGroup.triggerGracefulShutdown()
            try await group.waitForAll()
        }
        #expect(indexer.statistics.ignored >= 1)
        #expect(try await indexerIndex.idsWithTag("Stale") == [])
        #expect(try await indexerIndex.idsWithTag("Changed") == [ids[0]])
        #expect(try await indexerIndex.idsWithTag("X") == [])
        try await service.index.sweepExpired()

        let apiDigest = try await service.index.digest()
        let indexerDigest = try await indexerIndex.digest()
        #expect(indexerDigest.differences(from: apiDigest) == [])
        #expect(indexerDigest == apiDigest)

        // In order (one pipeline at a time) every count is exact; with several pipelines in
        // flight the counts depend on arrival order (an older installation document applied after
        // the newer one is ignored), but the rebuilt state may not.
        for concurrency in [1, 4] {
            try await indexerIndex.wipe(private: indexerRedis.canRestart)
            #expect(try await indexerIndex.digest().keyCount == 0)
            let reindexer = Reindexer(
                configuration: configuration, consumerConfiguration: RegistryFixtures.consumerConfiguration(broker),
                index: indexerIndex, concurrency: concurrency, batchSize: 7
            )
            let progress = ProgressLog()
            let summary = try await reindexer.run { progress.record($0) }
            #expect(summary.recordsRead == expectedRecords)
            #expect(summary.applied + summary.deleted + summary.installations + summary.ignored == expectedRecords)
            if concurrency == 1 {
                // 12 puts (the expired one is applied as a removal), the update, 2 + 1 installation
                // registrations; the delete and the dropped template's tombstone; 2 installation
                // documents; the stale replay.
                #expect(summary.applied == 16)
                #expect(summary.deleted == 2)
                #expect(summary.installations == 2)
                #expect(summary.ignored == 1)
            } else {
                #expect((1...2).contains(summary.installations))
            }
            #expect(progress.last?.recordsRead == expectedRecords)
            let rebuilt = try await indexerIndex.digest()
            #expect(rebuilt.differences(from: apiDigest) == [])
            #expect(rebuilt == apiDigest)
        }
    }
}

final class ProgressLog: @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [Reindexer.Progress] = []

    func record(_ progress: Reindexer.Progress) {
        lock.lock()
        entries.append(progress)
        lock.unlock()
    }

    var last: Reindexer.Progress? {
        lock.lock()
        defer { lock.unlock() }
        return entries.last
    }
}

/// Set once, read from anywhere.
final class ManagedAtomicFlag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .releasing) }
    var isSet: Bool { value.load(ordering: .acquiring) }
}
