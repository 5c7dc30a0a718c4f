import Foundation
import HeraldAPI
import HeraldApp
import HeraldPipeline
import HeraldTestSupport
import Synchronization
import Testing
import HeraldStreams

/// Fault suite: registration writes through `herald api` as fast as 16 concurrent clients go,
/// with the indexer worker SIGKILLed and restarted half way. Every write the API acknowledged
/// (200) must be in `herald.registrations` and readable through the API afterwards.
///
/// `make test` writes 2,000 registrations; HERALD_FAULT_API_WRITES=10000 runs the full size.
@Suite("API under load with a worker restart", .heavy, .enabled(if: HeraldBinary.isBuilt, "build the herald executable first"))
struct APILoadTests {
    static let writes = Int(ProcessInfo.processInfo.environment["HERALD_FAULT_API_WRITES"] ?? "") ?? 2_000
    static let concurrency = 16

    @Test("every acknowledged registration write is in the log and the index; p99 reported")
    func writesUnderLoad() async throws {
        let redis = try TestRedis()
        let broker = try TestBroker()
        defer {
            broker.stop()
            redis.stop()
        }
        let port = freeLocalPort()
        let base = URL(string: "http://127.0.0.1:\(port)/")!
        let key = "load-test-key-" + String(repeating: "k", count: 32)
        let common = [
            "HERALD_KAFKA_BROKERS": broker.bootstrapServers, "HERALD_REDIS_URL": redis.url, "HERALD_LOG_LEVEL": "warning",
            "HERALD_SESSION_TIMEOUT_MS": String(TestBroker.sessionTimeoutMs), "HERALD_METRICS_PORT": "0",
        ]
        let api = try HeraldBinary.start(
            ["api"],
            environment: common.merging([
                "HERALD_API_HOST": "127.0.0.1", "HERALD_API_PORT": String(port), "HERALD_HUB_URI": base.absoluteString,
                "HERALD_POLICIES": "Full:listen+send+manage:\(key)", "HERALD_ID_SECRET": String(repeating: "i", count: 40),
            ]) { $1 })
        defer {
            api.signal(SIGTERM)
            _ = api.waitForExit(timeout: 20)
        }
        let indexer = ["HERALD_ROLES": "indexer"]
        var worker = try HeraldBinary.start(["worker"], environment: common.merging(indexer) { $1 })
        let client = HeraldHTTPClient(
            baseURL: base,
            authorization: SharedAccessSignature.token(
                resource: base.absoluteString, policy: "Full", key: key, expiry: Date().addingTimeInterval(3_600)))
        for _ in 0..<300 {
            if let reply = try? await client.send("GET", "/health/ready"), reply.status == 200 { break }
            try await Task.sleep(for: .milliseconds(100))
        }

        let device = Data(#"{"platform":"apns","handle":"\#(String(repeating: "ab", count: 32))","tags":["World"]}"#.utf8)
        let record = LoadRecord()
        let started = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for lane in 0..<Self.concurrency {
                group.addTask {
                    for _ in stride(from: lane, to: Self.writes, by: Self.concurrency) {
                        do {
                            let issued = try await client.send("POST", "/v1/registrationIDs")
                            guard issued.status == 201, let id = issued.header("Location")?.split(separator: "/").last else {
                                record.failures.withLock { $0.append("POST \(issued.status)") }
                                continue
                            }
                            let begun = ContinuousClock.now
                            let put = try await client.send("PUT", "/v1/registrations/\(id)", body: device)
                            let elapsed = ContinuousClock.now - begun
                            if put.status == 200 {
                                record.acknowledged.withLock { $0.append(String(id)) }
                                record.writeLatencies.withLock {
                                    $0.append(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1_000)
                                }
                            } else {
                                record.failures.withLock { $0.append("PUT \(put.status)") }
                            }
                        } catch {
                            record.failures.withLock { $0.append("\(error)") }
                        }
                        record.done.add(1, ordering: .relaxed)
                    }
                }
            }
            // Half way, the worker (the indexer) is killed and started again.
            while record.done.load(ordering: .relaxed) < Self.writes / 2 { try await Task.sleep(for: .milliseconds(20)) }
            worker.signal(SIGKILL)
            _ = worker.waitForExit(timeout: 10)
            worker = try HeraldBinary.start(["worker"], environment: common.merging(indexer) { $1 })
            try await group.waitForAll()
        }
        let seconds =
            Double((ContinuousClock.now - started).components.seconds) + Double((ContinuousClock.now - started).components.attoseconds)
            / 1e18
        defer {
            worker.signal(SIGTERM)
            _ = worker.waitForExit(timeout: 20)
        }

        let ids = record.acknowledged.withLock { $0 }
        #expect(record.failures.withLock { $0 }.isEmpty, "\(record.failures.withLock { $0.prefix(5) })")
        #expect(ids.count == Self.writes)
        // Every acknowledged write is in the system of record ...
        var logged = Set<String>()
        for try await message in RecordTail(topic: "herald.registrations", bootstrapServers: broker.bootstrapServers).records() {
            if let key = message.key { logged.insert(String(decoding: key, as: UTF8.self)) }
        }
        let missingFromLog = Set(ids).subtracting(logged)
        #expect(missingFromLog.isEmpty, "\(missingFromLog.count) acknowledged writes are not in herald.registrations")
        // ... and readable from the index.
        var readLatencies: [Double] = []
        var unreadable = 0
        for id in ids {
            let begun = ContinuousClock.now
            let reply = try await client.send("GET", "/v1/registrations/\(id)")
            let elapsed = ContinuousClock.now - begun
            readLatencies.append(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1_000)
            if reply.status != 200 { unreadable += 1 }
        }
        #expect(unreadable == 0, "\(unreadable) acknowledged registrations cannot be read back")
        func p99(_ values: [Double]) -> Double {
            let sorted = values.sorted()
            return sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int((0.99 * Double(sorted.count)).rounded(.up)) - 1)]
        }
        print(
            String(
                format:
                    "API under load: %d writes (each an id issue and a PUT) in %.1f s with %d clients and a worker restart, PUT p99 %.1f ms, GET p99 %.1f ms; all in the log and the index",
                ids.count, seconds, Self.concurrency, p99(record.writeLatencies.withLock { $0 }), p99(readLatencies)
            ))
    }
}

/// What the load's clients share.
private final class LoadRecord: Sendable {
    let acknowledged = Mutex<[String]>([])
    let writeLatencies = Mutex<[Double]>([])
    let failures = Mutex<[String]>([])
    let done = Atomic<Int>(0)
}
