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
        try await HeavyTestSlots.shared.withSlot(named: "\(test.id)", function)
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

    /// Runs `body` in a slot. With `HERALD_TEST_HEAVY_TIMES` set to a file, each slot's time
    /// (seconds, then the test's name) is appended to it: `sort -rn` shows what the pass waits on.
    public func withSlot(named name: String = "", _ body: @Sendable () async throws -> Void) async throws {
        await acquire()
        let start = ContinuousClock.now
        defer {
            release()
            record(name, start.duration(to: .now))
        }
        try await body()
    }

    private func record(_ name: String, _ held: Duration) {
        guard let path = ProcessInfo.processInfo.environment["HERALD_TEST_HEAVY_TIMES"], !path.isEmpty,
            let file = FileHandle(forWritingAtPath: path) ?? Self.create(path)
        else { return }
        defer { try? file.close() }
        let seconds = Double(held.components.seconds) + Double(held.components.attoseconds) / 1e18
        _ = try? file.seekToEnd()
        try? file.write(contentsOf: Data((String(format: "%.1f", seconds) + "\t\(name)\n").utf8))
    }

    private static func create(_ path: String) -> FileHandle? {
        FileManager.default.createFile(atPath: path, contents: nil)
        return FileHandle(forWritingAtPath: path)
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
