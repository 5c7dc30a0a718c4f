import Foundation
import Synchronization

extension Duration {
    /// The duration in seconds as a `Double`, for rates and reports.
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    var milliseconds: Double { seconds * 1_000 }
}

/// Nearest-rank percentiles of a sample.
struct Percentiles {
    let sorted: [Double]

    init(_ values: [Double]) { sorted = values.sorted() }

    /// `p` in 0...100; 0 for an empty sample.
    func value(_ p: Double) -> Double {
        guard !sorted.isEmpty else { return 0 }
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
        return sorted[Swift.min(sorted.count - 1, Swift.max(0, rank - 1))]
    }

    var max: Double { sorted.last ?? 0 }
}

/// A flag one task sets and others poll (for example "the broadcast has completed").
final class StopFlag: Sendable {
    private let value = Atomic<Bool>(false)

    func set() { value.store(true, ordering: .releasing) }
    var isSet: Bool { value.load(ordering: .acquiring) }
}

/// The spans of time fan-outs ran (publish to last delivery), told to a latency stream
/// running beside them.
final class FanoutWindows: Sendable {
    private let spans = Mutex<[ClosedRange<Date>]>([])

    func add(_ span: ClosedRange<Date>) { spans.withLock { $0.append(span) } }
    func contains(_ date: Date) -> Bool { spans.withLock { $0.contains { $0.contains(date) } } }
}

/// A counter shared by threads: hands out work (`take`) and counts what is done (`add`).
final class SharedCounter: Sendable {
    private let value: Atomic<Int>

    init(_ initial: Int = 0) { value = Atomic(initial) }

    /// Adds `amount` and returns the value before.
    @discardableResult
    func add(_ amount: Int) -> Int { value.add(amount, ordering: .relaxed).oldValue }
    var current: Int { value.load(ordering: .relaxed) }
}

/// Progress lines on standard error, so standard output carries only the result table.
enum Console {
    static func say(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    static func count(_ value: Int) -> String {
        let digits = Array(String(value))
        var text = ""
        for (offset, digit) in digits.enumerated() {
            if offset > 0 && (digits.count - offset) % 3 == 0 { text.append(",") }
            text.append(digit)
        }
        return text
    }

    static func fixed(_ value: Double, _ decimals: Int = 1) -> String {
        String(format: "%.\(decimals)f", value)
    }
}

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
