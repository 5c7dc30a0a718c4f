import HeraldTestSupport
import Testing

@Suite("Heavy-test slots")
struct HeavyTestSlotsTests {
    /// The order the tests got their slot in.
    actor Order {
        var names: [String] = []
        func append(_ name: String) { names.append(name) }
    }

    @Test("a suite that already had a slot goes before suites not yet begun; otherwise first come, first served")
    func begunSuitesGoFirst() async throws {
        let slots = HeavyTestSlots(limit: 1)
        let order = Order()
        let (gate, open) = AsyncStream.makeStream(of: Void.self)
        let holder = Task {
            try await slots.withSlot(named: "serial/first", suite: "serial") {
                await order.append("serial/first")
                for await _ in gate { break }
            }
        }
        try await waitUntilTrue("the first test to hold the slot") { await order.names.count == 1 }
        var queued: [Task<Void, any Error>] = []
        for (name, suite) in [("other/first", "other"), ("third/first", "third"), ("serial/second", "serial")] {
            queued.append(Task { try await slots.withSlot(named: name, suite: suite) { await order.append(name) } })
            let behind = queued.count
            try await waitUntilTrue("\(name) to queue") { await slots.queued == behind }
        }
        open.yield()
        try await holder.value
        for task in queued { try await task.value }
        #expect(await order.names == ["serial/first", "serial/second", "other/first", "third/first"])
    }
}
