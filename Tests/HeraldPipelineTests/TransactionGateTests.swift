import Foundation
import HeraldRedis
@testable import HeraldPipeline
import Synchronization
import Testing

@Suite("Transaction gate and deliveries partitions")
struct TransactionGateTests {
    @Test func oneTaskPassesAtATime() async throws {
        let gate = TransactionGate()
        let counters = Counters()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    try await gate.pass {
                        let now = counters.inside.add(1, ordering: .relaxed).newValue
                        counters.most.max(now, ordering: .relaxed)
                        try await Task.sleep(for: .milliseconds(2))
                        counters.inside.subtract(1, ordering: .relaxed)
                        counters.passed.add(1, ordering: .relaxed)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(counters.passed.load(ordering: .relaxed) == 8)
        #expect(counters.most.load(ordering: .relaxed) == 1)
        #expect(gate.waiting == 0)
    }

    @Test func waitersPassInArrivalOrder() async throws {
        let gate = TransactionGate()
        let order = Order()
        let (release, releaser) = AsyncStream<Void>.makeStream()
        let holder = Task {
            await gate.pass {
                order.append("holder")
                for await _ in release { break }
            }
        }
        try await until { order.names == ["holder"] }
        var waiters: [Task<Void, Never>] = []
        for name in ["first", "second", "third"] {
            let expected = gate.waiting + 1
            waiters.append(Task { await gate.pass { order.append(name) } })
            try await until { gate.waiting == expected }
        }
        releaser.yield()
        await holder.value
        for waiter in waiters { await waiter.value }
        #expect(order.names == ["holder", "first", "second", "third"])
        #expect(gate.waiting == 0)
    }

    /// A bulk lane writes the deliveries partition of its task's partition; without one it
    /// moves through its range.
    @Test func bulkLanesWriteTheDeliveriesPartitionOfTheirTaskPartition() {
        let configuration = PipelineConfiguration()
        let executor = TaskExecutor(
            configuration: configuration, redis: RedisConnection(configuration: configuration.redis),
            packReader: RedisConnection(configuration: configuration.redis),
            templates: TemplateCache(layout: configuration.layout), gate: nil, logger: .init(label: "test"), metrics: PipelineMetrics()
        )
        executor.deliveryPartitions = 2..<10
        for source: Int32 in 0..<20 {
            executor.choosePartition(source: source)
            #expect(executor.transactionPartition == 2 + source % 8)
        }
        var seen: Set<Int32> = []
        for _ in 0..<8 {
            executor.choosePartition()
            seen.insert(executor.transactionPartition ?? -1)
        }
        #expect(seen == Set(2..<10))
        executor.deliveryPartitions = nil
        executor.choosePartition(source: 3)
        #expect(executor.transactionPartition == nil)
    }

    private final class Counters: Sendable {
        let inside = Atomic<Int>(0)
        let most = Atomic<Int>(0)
        let passed = Atomic<Int>(0)
    }

    private final class Order: Sendable {
        private let list = Mutex<[String]>([])
        func append(_ name: String) { list.withLock { $0.append(name) } }
        var names: [String] { list.withLock { $0 } }
    }

    private func until(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while !condition() {
            guard ContinuousClock.now < deadline else { throw CancellationError() }
            try await Task.sleep(for: .milliseconds(1))
        }
    }
}
