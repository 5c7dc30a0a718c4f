import Foundation
import Testing

/// Marks a suite or test that starts servers, processes or a pipeline. Each of its test cases
/// takes a slot of one process-wide limit while it runs, so the pass never runs more of them at
/// once than the machine has cores (`HERALD_TEST_HEAVY_LIMIT` overrides); pure tests beside
/// them stay parallel.
public struct HeavyTestTrait: TestTrait, SuiteTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await HeavyTestSlots.shared.withSlot(function)
    }
}

extension Trait where Self == HeavyTestTrait {
    /// Starts servers, processes or a pipeline: runs with at most as many others as there are cores.
    public static var heavy: Self { HeavyTestTrait() }
}

/// A counting semaphore for heavy tests, first come first served.
public actor HeavyTestSlots {
    public static let shared = HeavyTestSlots(limit: HeavyTestSlots.configuredLimit())

    public let limit: Int
    private var inUse = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    public init(limit: Int) { self.limit = max(1, limit) }

    public func withSlot(_ body: @Sendable () async throws -> Void) async throws {
        await acquire()
        do {
            try await body()
        } catch {
            release()
            throw error
        }
        release()
    }

    private func acquire() async {
        if inUse < limit {
            inUse += 1
            return
        }
        // The slot is handed over by `release`, which keeps `inUse` as it is.
        await withCheckedContinuation { waiting.append($0) }
    }

    private func release() {
        if waiting.isEmpty {
            inUse -= 1
        } else {
            waiting.removeFirst().resume()
        }
    }

    static func configuredLimit() -> Int {
        let variable = "HERALD_TEST_HEAVY_LIMIT"
        guard let text = ProcessInfo.processInfo.environment[variable], !text.isEmpty else {
            return ProcessInfo.processInfo.activeProcessorCount
        }
        guard let value = Int(text), value >= 1 else {
            fatalError("\(variable)=\(text): expected a whole number of at least 1")
        }
        return value
    }
}
