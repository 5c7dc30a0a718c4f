import HeraldRedis
import HeraldTestSupport
import Testing

/// Lets `count` tasks continue only once all of them have arrived.
private actor Barrier {
    private let count: Int
    private var arrived = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(count: Int) { self.count = count }

    func arriveAndWait() async {
        arrived += 1
        if arrived == count {
            for continuation in waiting { continuation.resume() }
            waiting.removeAll()
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }
}

@Suite("Connection pool")
struct RedisConnectionPoolTests {
    @Test("concurrent borrowers hold distinct connections", .timeLimit(.minutes(1)))
    func distinctConnections() async throws {
        let redis = try TestRedis()
        let pool = RedisConnectionPool(configuration: redis.configuration, size: 4)
        defer { pool.shutdown() }
        let barrier = Barrier(count: 4)

        // All four hold their connection at the same time (the barrier), so a pool that
        // handed one connection out twice, or made a borrower wait, would show here.
        let clientIDs = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    try await pool.withConnection { connection in
                        await barrier.arriveAndWait()
                        return try await connection.send(RedisCommand("CLIENT", "ID")).int ?? -1
                    }
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(Set(clientIDs).count == 4)
        #expect(!clientIDs.contains(-1))
        #expect(pool.openConnectionCount == 4)
    }

    @Test("more tasks than connections all complete, on at most `size` connections", .timeLimit(.minutes(1)))
    func moreTasksThanConnections() async throws {
        let redis = try TestRedis()
        let pool = RedisConnectionPool(configuration: redis.configuration, size: 3)
        defer { pool.shutdown() }
        let counter = uniquePrefix() + "counter"

        let results = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<60 {
                group.addTask {
                    try await pool.withConnection { connection in
                        try await connection.pipeline([.incr(counter), .ping])[0].get().int ?? -1
                    }
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(results.sorted() == Array(1...60))
        #expect(pool.openConnectionCount <= 3)
    }

    @Test("after shutdown borrowing fails with .closed")
    func shutdownRefuses() async throws {
        let redis = try TestRedis()
        let pool = RedisConnectionPool(configuration: redis.configuration, size: 1)
        _ = try await pool.withConnection { try await $0.send(.ping) }
        pool.shutdown()
        let error = await #expect(throws: RedisError.self) { try await pool.withConnection { try await $0.send(.ping) } }
        #expect(error?.code == .closed)
        #expect(pool.openConnectionCount == 0)
    }
}

@Suite("Answers within a limit")
struct AnswerWithinTests {
    @Test("a check that does not finish in time answers nil at the limit; one that does answers its value")
    func answerWithin() async {
        let hung = await answer(within: .milliseconds(50)) { () async -> Int? in
            try? await Task.sleep(for: .seconds(3_600))
            return 1
        }
        #expect(hung == nil)
        let prompt = await answer(within: .seconds(600)) { () async -> Int? in 7 }
        #expect(prompt == 7)
    }
}
