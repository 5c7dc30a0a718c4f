import Foundation

/// Runs blocking work (Redis pipelines, producer enqueue loops) on threads of its own, away
/// from Swift's cooperative pool, which on a 2-core machine has only two threads.
enum BlockingThreads {
    /// Runs `body(0..<count)` on `count` new threads and returns when all have finished;
    /// rethrows the first error.
    static func run(count: Int, name: String, _ body: @escaping @Sendable (Int) throws -> Void) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<count {
                group.addTask { try await run(name: "\(name)-\(index)") { try body(index) } }
            }
            try await group.waitForAll()
        }
    }

    /// Runs `body` on a new thread and returns its result.
    static func run<T: Sendable>(name: String, _ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Result { try body() }) }
            thread.name = name
            thread.stackSize = 8 << 20
            thread.start()
        }
    }
}
