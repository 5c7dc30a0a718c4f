import Foundation
import Testing

/// Marks a suite or test that starts servers, processes or a pipeline. Each of its test cases
/// takes a slot of one process-wide limit while it runs, so the pass never runs more of them at
/// once than the machine has cores (`HERALD_TEST_HEAVY_LIMIT` overrides); pure tests beside
/// them stay parallel. With `HERALD_TEST_SLOTS_DIR` the slots are shared by every test process
/// pointed at that directory (`make test` runs its passes side by side on one set of slots).
public struct HeavyTestTrait: TestTrait, SuiteTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        let name = "\(test.id)"
        try await HeavyTestSlots.shared.withSlot(named: name, suite: name.split(separator: "/").first.map(String.init), function)
    }
}

extension Trait where Self == HeavyTestTrait {
    /// Starts servers, processes or a pipeline: runs with at most as many others as there are cores.
    public static var heavy: Self { HeavyTestTrait() }
}

/// A counting semaphore for heavy tests, first come first served within the process, except that
/// a suite that already had a slot goes first: a serialized suite's next test does not queue
/// behind every suite not yet begun, so it runs its tests back to back instead of trailing at
/// the end of the pass with the other slots idle. Across processes, through lock files when
/// given a directory.
public actor HeavyTestSlots {
    public static let shared = HeavyTestSlots(
        limit: HeavyTestSlots.configuredLimit(),
        sharedDirectory: ProcessInfo.processInfo.environment["HERALD_TEST_SLOTS_DIR"].flatMap { $0.isEmpty ? nil : $0 })

    public let limit: Int
    private var inUse = 0
    private var waiting: [(continuing: Bool, turn: CheckedContinuation<Void, Never>)] = []
    /// The suites that have had a slot.
    private var begun: Set<String> = []
    private let files: SlotFiles?

    /// How many tests wait for a slot.
    public var queued: Int { waiting.count }

    public init(limit: Int, sharedDirectory: String? = nil) {
        self.limit = max(1, limit)
        files = sharedDirectory.map { SlotFiles(directory: $0, count: max(1, limit)) }
    }

    /// Runs `body` in a slot. With `HERALD_TEST_HEAVY_TIMES` set to a file, each slot's time is
    /// appended to it (seconds held, when it was taken in seconds since 1970, the test's name):
    /// `sort -rn` shows what the pass waits on, `sort -k2 -n` the order the slots were taken in.
    public func withSlot(named name: String = "", suite: String? = nil, _ body: @Sendable () async throws -> Void) async throws {
        await acquire(continuing: suite.map(begun.contains) ?? false)
        if let suite { begun.insert(suite) }
        let held = await files?.claim()
        let start = ContinuousClock.now
        let taken = Date().timeIntervalSince1970
        defer {
            if let held { files?.release(held) }
            release()
            record(name, taken: taken, held: start.duration(to: .now))
        }
        try await body()
    }

    private func record(_ name: String, taken: TimeInterval, held: Duration) {
        guard let path = ProcessInfo.processInfo.environment["HERALD_TEST_HEAVY_TIMES"], !path.isEmpty,
            let file = FileHandle(forWritingAtPath: path) ?? Self.create(path)
        else { return }
        defer { try? file.close() }
        let seconds = Double(held.components.seconds) + Double(held.components.attoseconds) / 1e18
        _ = try? file.seekToEnd()
        try? file.write(contentsOf: Data((String(format: "%.1f\t%.1f", seconds, taken) + "\t\(name)\n").utf8))
    }

    private static func create(_ path: String) -> FileHandle? {
        FileManager.default.createFile(atPath: path, contents: nil)
        return FileHandle(forWritingAtPath: path)
    }

    private func acquire(continuing: Bool) async {
        if inUse < limit {
            inUse += 1
            return
        }
        // The slot is handed over by `release`, which keeps `inUse` as it is.
        await withCheckedContinuation { waiting.append((continuing, $0)) }
    }

    private func release() {
        guard let next = waiting.firstIndex(where: \.continuing) ?? waiting.indices.first else {
            inUse -= 1
            return
        }
        waiting.remove(at: next).turn.resume()
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

/// Slots shared by processes: `slot-<n>.lock` files in one directory, each held with an
/// exclusive `flock` while a heavy test runs (the kernel drops it when a process dies, so a
/// crashed pass never keeps a slot).
final class SlotFiles: Sendable {
    let directory: String
    let count: Int

    init(directory: String, count: Int) {
        self.directory = directory
        self.count = count
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    /// The descriptor of a slot file now locked, once one is free (polled: a blocking `flock`
    /// would hold a thread of the cooperative pool).
    func claim() async -> Int32 {
        while true {
            for slot in 0..<count {
                let descriptor = open("\(directory)/slot-\(slot).lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
                guard descriptor >= 0 else {
                    fatalError("HERALD_TEST_SLOTS_DIR=\(directory): cannot open slot-\(slot).lock (errno \(errno))")
                }
                if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { return descriptor }
                close(descriptor)
            }
            try? await Task.sleep(for: .milliseconds(100))
        }
    }

    func release(_ descriptor: Int32) {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}
