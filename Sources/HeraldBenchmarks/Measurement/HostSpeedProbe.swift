import Foundation
import Synchronization

/// How fast the host's cores run at each moment of a run, for reading figures measured minutes
/// apart on a shared machine.
///
/// Every `interval` a thread of its own runs the same fixed piece of work (`work`: a chain of
/// xorshift steps, each updating a random entry of an 8 MiB table, so the caches and the memory
/// the host's other tenants share count, not only the core) and records the CPU time its thread
/// spent on it. CPU time, not wall time: waiting for a core does not count, only how long the
/// core took once it ran the work. On the project's 2-core machine quick runs of one binary fell
/// into a fast and a slow group, and this work took about 1.2 ms of CPU during the fast 1M
/// broadcasts against 1.6-1.7 ms during the slow ones, while the workers' CPU for the same
/// deliveries differed by 1.5 x (docs/performance.md, "Why single runs differ"). The host's co-tenants, not the
/// code, set that speed. A measurement's median sample (`CPUAccount.hostProbeMilliseconds`)
/// says at which speed it ran.
final class HostSpeedProbe: Sendable {
    struct Sample: Sendable {
        var at: ContinuousClock.Instant
        var milliseconds: Double
    }

    /// Table entries of `work` (8 MiB of `UInt64`: more than the caches a core has to itself).
    static let tableEntries = 1 << 20
    /// xorshift steps of one `work`: about 1-2 ms on the project's machine.
    static let steps = 100_000

    let interval: Duration
    private let samples = Mutex<[Sample]>([])
    private let stopped = StopFlag()

    init(interval: Duration = .milliseconds(200)) {
        self.interval = interval
    }

    /// Starts sampling on a thread of its own, until `stop()`.
    func start() {
        let thread = Thread { [self] in
            var table = [UInt64](repeating: 0, count: Self.tableEntries)
            while !stopped.isSet {
                let milliseconds = Self.measure(&table)
                samples.withLock { $0.append(Sample(at: .now, milliseconds: milliseconds)) }
                Thread.sleep(forTimeInterval: interval.seconds)
            }
        }
        thread.name = "host-speed-probe"
        thread.start()
    }

    func stop() { stopped.set() }

    /// The median sample taken between `start` and `end`; nil when none was.
    func median(from start: ContinuousClock.Instant, to end: ContinuousClock.Instant) -> Double? {
        Self.median(of: samples.withLock { $0 }, from: start, to: end)
    }

    static func median(of samples: [Sample], from start: ContinuousClock.Instant, to end: ContinuousClock.Instant) -> Double? {
        let inside = samples.filter { $0.at >= start && $0.at <= end }.map(\.milliseconds).sorted()
        guard !inside.isEmpty else { return nil }
        let middle = inside.count / 2
        return inside.count % 2 == 1 ? inside[middle] : (inside[middle - 1] + inside[middle]) / 2
    }

    /// CPU milliseconds this thread spent on one `work`.
    static func measure(_ table: inout [UInt64]) -> Double {
        let before = threadCPUNanoseconds()
        let checksum = work(&table, seed: UInt64(before) | 1)
        let after = threadCPUNanoseconds()
        // Keeps the work observable, so the optimizer cannot drop it.
        if checksum == 0 { table[0] &+= 1 }
        return Double(after - before) / 1e6
    }

    /// `steps` xorshift64 steps, each adding its value to the table entry it picks. Returns
    /// the last value.
    static func work(_ table: inout [UInt64], seed: UInt64) -> UInt64 {
        var x = seed == 0 ? 0x9E37_79B9_7F4A_7C15 : seed
        let mask = UInt64(table.count - 1)
        table.withUnsafeMutableBufferPointer { entries in
            for _ in 0..<steps {
                x ^= x << 13
                x ^= x >> 7
                x ^= x << 17
                entries[Int(x & mask)] &+= x
            }
        }
        return x
    }

    /// CPU time of the calling thread (`CLOCK_THREAD_CPUTIME_ID`).
    static func threadCPUNanoseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }
}
