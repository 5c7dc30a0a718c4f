import Foundation

/// CPU seconds of every party of a measurement (workers, broker, Redis, this process, the
/// whole machine), read before and after it, so a report can say whether Herald, the broker,
/// Redis or other work on a shared machine used the cores.
struct CPUMeter: Sendable {
    let brokerPID: Int32?
    /// Every Redis server of the measurement (one, or a cluster's masters and replicas).
    let redisPIDs: [Int32]
    /// Samples the host's speed during the run (`CPUAccount.hostProbeMilliseconds`).
    var probe: HostSpeedProbe? = nil

    struct Snapshot {
        var at: ContinuousClock.Instant
        var workers: Double
        var broker: Double?
        var redis: Double?
        var benchmark: Double
        var machine: Double?
        /// Of `workers` and `benchmark`: librdkafka's own threads (`rdk:*`).
        var workersLibrdkafka: Double
        var benchmarkLibrdkafka: Double?
    }

    func snapshot(workers: [WorkerProcess]) -> Snapshot {
        Snapshot(
            at: .now, workers: workers.compactMap(\.cpuSeconds).reduce(0, +),
            broker: brokerPID.flatMap { ProcessProbe.cpuSeconds(pid: $0) },
            redis: Self.total(redisPIDs.map { ProcessProbe.cpuSecondsWithChildren(pid: $0) }),
            benchmark: ProcessProbe.cpuSeconds(pid: getpid()) ?? 0,
            machine: ProcessProbe.machineBusySeconds(),
            workersLibrdkafka: workers.compactMap { ProcessProbe.threadCPUSeconds(pid: $0.pid, namePrefix: Self.librdkafkaThreads) }.reduce(
                0, +),
            benchmarkLibrdkafka: ProcessProbe.threadCPUSeconds(pid: getpid(), namePrefix: Self.librdkafkaThreads)
        )
    }

    /// Waits until processes that are not part of the run (`CPUAccount.others`) use less
    /// than `threshold` cores over `window`, at most about `limit`, and returns the seconds
    /// waited. A measurement that follows another job's burst (Redis rewriting its log after
    /// a cleanup, the kernel freeing the old file) then starts on a quiet machine; one that
    /// cannot wait it out is flagged by `CPUAccount.isDisturbed`.
    func waitForQuiet(
        workers: [WorkerProcess], threshold: Double = 0.05, window: Duration = .milliseconds(300), limit: Duration = .seconds(15)
    ) async -> Double {
        await Self.waitForQuiet(threshold: threshold, limit: limit) {
            let before = snapshot(workers: workers)
            try? await Task.sleep(for: window)
            return account(before, snapshot(workers: workers)).othersCores
        }
    }

    /// The loop of `waitForQuiet`: `sample` measures other processes' cores over one window
    /// (nil when the machine's total is unknown, which ends the wait).
    static func waitForQuiet(threshold: Double, limit: Duration, sample: () async -> Double?) async -> Double {
        let started = ContinuousClock.now
        while true {
            guard let others = await sample() else { break }
            if others < threshold || ContinuousClock.now - started >= limit { break }
        }
        return (ContinuousClock.now - started).seconds
    }

    /// The sum of the servers' CPU seconds, nil when there are none or one could not be read.
    private static func total(_ seconds: [Double?]) -> Double? {
        seconds.isEmpty || seconds.contains(nil) ? nil : seconds.compactMap { $0 }.reduce(0, +)
    }

    /// The prefix of the names librdkafka gives its threads.
    static let librdkafkaThreads = "rdk:"

    func account(_ before: Snapshot, _ after: Snapshot) -> BenchmarkReport.CPUAccount {
        func difference(_ a: Double?, _ b: Double?) -> Double? { a.flatMap { a in b.map { $0 - a } } }
        return BenchmarkReport.CPUAccount(
            wallSeconds: (after.at - before.at).seconds, workers: after.workers - before.workers,
            broker: difference(before.broker, after.broker), redis: difference(before.redis, after.redis),
            benchmark: after.benchmark - before.benchmark, machine: difference(before.machine, after.machine),
            cpuPressure: ProcessProbe.cpuPressure(),
            workersLibrdkafka: after.workersLibrdkafka - before.workersLibrdkafka,
            benchmarkLibrdkafka: difference(before.benchmarkLibrdkafka, after.benchmarkLibrdkafka),
            hostProbeMilliseconds: probe?.median(from: before.at, to: after.at)
        )
    }
}
