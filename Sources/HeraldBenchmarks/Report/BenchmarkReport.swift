import Foundation
import HeraldDomain

/// Everything one `herald bench` run measured, written as JSON under `bench/results/` and
/// printed as one table (`BenchmarkReport+table`).
public struct BenchmarkReport: Sendable, Codable {
    public var runId: String
    public var startedAt: String
    public var finishedAt: String?
    public var machine: MachineDescription
    public var settings: Settings
    public var micro: [Micro] = []
    /// The broker ceiling, measured first.
    public var ceiling: Ceiling?
    /// The same measurement again, after the main population's fan-out phases (their workers
    /// stopped). Absent in reports older than this field and in runs without fan-outs.
    public var ceilingAfter: Ceiling?
    public var seeding: [Seeding] = []
    public var fanouts: [Fanout] = []
    /// Broadcasts each measured between two ceilings of their own (`BenchmarkOptions.rounds`).
    public var rounds: Rounds? = nil
    public var latency: [Latency] = []
    public var memory: [Memory] = []
    public var reindex: Reindex?
    /// A broadcast stopped in flight.
    public var stop: Stop?
    /// A broadcast of the main population rehearsed (`dryRun`).
    public var rehearsal: Rehearsal?
    /// A breaking event published while a bulk broadcast is in flight.
    public var preemption: Preemption?
    /// Another hub's breaking alert, alone and while the main hub is busy (`HubIsolation`).
    public var isolation: [HubIsolation] = []
    /// Schedules due in the same second, released by one scheduler (`SchedulePhase`).
    public var schedules: Schedules?
    /// Deliveries pushed by one sender worker to the local APNs server, beside that server's
    /// ceiling measured by h2load (`SenderPhase`).
    public var sender: Sender?
    /// The same for Web Push: deliveries encrypted and pushed to the local Web Push service.
    public var webPushSender: Sender?
    /// Broadcasts timed from their publish to every push accepted (`PopulationPhase.Kind.reach`).
    public var reach: Reach?
    /// What an idle Herald costs: a worker with its default roles and the API, nothing to do,
    /// with Herald's production fetch waits (`IdlePhase`); measured last.
    public var idle: Idle? = nil
    /// Anything a reader must know to trust (or distrust) the figures.
    public var notes: [String] = []

    public struct Settings: Sendable, Codable, Hashable {
        public var registrations: Int
        public var memorySizes: [Int]
        public var workers: Int
        public var bulkLanesPerWorker: Int
        public var expressLanesPerWorker: Int
        public var partitions: Int
        public var slots: Int
        public var tasksPerBroadcast: Int
        public var lingerMs: Int
        public var compression: String
        public var seedPath: String
        /// `committed` or `seen` (`BenchmarkOptions.Clock`); absent in reports older than the
        /// commit clock, which were all `seen`.
        public var clock: String?
    }

    public struct Micro: Sendable, Codable, Hashable {
        public var name: String
        /// Median of the runs.
        public var nanosecondsPerOperation: Double
        public var iterationsPerRun: Int
        public var runs: [Double]
    }

    /// What every ratio divides by: the higher of the ceilings measured (each as seen by the
    /// consumer when it was). Other work on a shared machine can only slow a measurement
    /// down, so the better one is the closer estimate of what the broker can take, and the
    /// ratio is never flattered by a ceiling measured at a bad moment.
    public var ceilingReference: Double? {
        [ceiling, ceilingAfter].compactMap { $0?.referencePerSecond }.max()
    }

    /// The host's speed (`CPUAccount.hostProbeMilliseconds`) while the reference ceiling ran.
    public var ceilingReferenceHostProbe: Double? {
        guard let reference = ceilingReference else { return nil }
        return [ceiling, ceilingAfter].compactMap { $0 }.first { $0.referencePerSecond == reference }?.cpu?.hostProbeMilliseconds
    }

    /// A fan-out's ratio as it would be had the host run as fast as during the reference
    /// ceiling: the ratio times the fan-out's probe time over the ceiling's. An estimate (the
    /// probe's work is not Herald's), shown next to the ratio and never judged.
    public func ratioAtCeilingHostSpeed(_ fanout: Fanout) -> Double? {
        guard let ratio = fanout.ratioToCeiling, let here = fanout.cpu.hostProbeMilliseconds,
            let there = ceilingReferenceHostProbe, there > 0
        else { return nil }
        return ratio * here / there
    }

    /// The measurements during which other processes took `CPUAccount.disturbedCores` or more,
    /// each named with what they took: a ratio built on one of them was measured on a machine
    /// that was not the run's alone.
    public var disturbedMeasurements: [String] {
        var named: [(String, CPUAccount?)] = [("broker ceiling", ceiling?.cpu), ("broker ceiling again", ceilingAfter?.cpu)]
        named += fanouts.map { ("\($0.label) R=\($0.population)", $0.cpu) }
        if let rounds {
            named += rounds.ceilings.enumerated().map { ("ceiling \($0.offset + 1) of the rounds", $0.element.cpu) }
            named += rounds.fanouts.map { ("\($0.label) R=\($0.population)", $0.cpu) }
        }
        named.append(("idle Herald", idle?.cpu))
        return named.compactMap { name, cpu in
            guard let cpu, cpu.isDisturbed, let cores = cpu.othersCores else { return nil }
            return "\(name): other processes \(Console.fixed(cores, 2)) cores"
        }
    }

    /// The fan-out's average delivery size next to the ceiling's record size: the ratio
    /// compares like with like only when the two are about the same.
    public func recordSizes(_ fanout: Fanout) -> String? {
        guard let delivered = fanout.averageRecordBytes,
            let ceiling = [ceiling, ceilingAfter].compactMap({ $0 }).first
        else { return nil }
        return "\(Console.fixed(delivered, 0)) B avg, the ceiling's \(Console.fixed(ceiling.averageRecordBytes, 0)) B"
    }

    /// Sets every fan-out's `ratioToCeiling` against `ceilingReference` (nil without one).
    public mutating func applyCeilingReference() {
        let reference = ceilingReference
        for index in fanouts.indices {
            fanouts[index].ratioToCeiling = reference.map { fanouts[index].deliveriesPerSecond / $0 }
        }
    }

    /// One broker-ceiling measurement; `referencePerSecond` is what ratios use.
    public struct Ceiling: Sendable, Codable, Hashable {
        public var records: Int
        public var averageRecordBytes: Double
        public var producers: Int
        public var transactions: Int
        public var partitions: Int
        public var transactionalSeconds: Double
        public var transactionalPerSecond: Double
        /// Until the fan-out's clock stopped (`clock`): the reference of every ratio.
        public var observedSeconds: Double?
        public var observedPerSecond: Double?
        /// The same records through idempotent producers without transactions; nil where only
        /// the transactional run was measured (the ceilings of `Rounds`).
        public var idempotentSeconds: Double?
        public var idempotentPerSecond: Double?
        /// CPU during the transactional run until its clock stopped (producers count as `benchmark`).
        public var cpu: CPUAccount?
        /// What stopped `observedSeconds`' clock: `committed` (every transaction's progress
        /// record seen) or `seen` (the last record seen); nil in reports older than the commit clock (`seen`).
        public var clock: String? = nil

        /// The rate as the consumer saw it, or until the last commit when nothing watched.
        public var referencePerSecond: Double { observedPerSecond ?? transactionalPerSecond }
    }

    public struct Seeding: Sendable, Codable, Hashable {
        public var population: Int
        public var summary: PopulationSeeder.Summary
        public var identityCheck: SeedIdentityCheck.Outcome?
        public var cpu: CPUAccount?
        /// Seconds waited after seeding for Redis's background rewrite or save to end (nil:
        /// still running after the limit, so the next phase shared the cores with it).
        public var redisSettleSeconds: Double?
        /// Redis's `used_memory` (summed over the masters) after seeding minus before, per
        /// registration; nil when not measured.
        public var redisBytesPerRegistration: Double? = nil
    }

    /// One wide event, publish to the last delivery committed (`clock` `committed`) or seen
    /// by a `read_committed` consumer of the deliveries (`seen`).
    public struct Fanout: Sendable, Codable, Hashable {
        public var label: String
        public var population: Int
        public var eventId: String
        public var audience: String
        public var expected: Int
        public var observed: Int
        /// Publish to the first and to the last delivery committed or seen (`clock`): with
        /// `committed`, the first and the last task's commit.
        public var firstDeliverySeconds: Double
        public var seconds: Double
        public var deliveriesPerSecond: Double
        /// `deliveriesPerSecond` over `BenchmarkReport.ceilingReference`.
        public var ratioToCeiling: Double?
        /// From the final status record (`herald:status:<id>`), when it was read.
        public var statusTargets: Int?
        public var statusTasks: Int?
        /// The worker's own clock, from the status record, in seconds after publish: when the
        /// planner accepted the event, when the first page of deliveries was rendered and
        /// when the last task finished (before its transaction committed).
        public var acceptedSeconds: Double?
        public var renderedFirstSeconds: Double?
        /// When the first task began (its progress record's `startedAt`; `committed` clock only):
        /// what is before it is the planner and the hop through the task topic.
        public var taskStartedSeconds: Double? = nil
        /// When the planner's transaction (the event's tasks and `accepted` status) was seen
        /// committed (`committed` clock only).
        public var plannerCommitSeconds: Double? = nil
        public var workerCompletedSeconds: Double?
        /// Deliveries the reader had seen when the worker's last task finished: far below
        /// `expected` means the rest of `seconds` was the broker and the reader catching up.
        public var seenAtWorkerCompletion: Int?
        public var cpu: CPUAccount
        /// `committed` or `seen` (`BenchmarkOptions.Clock`); nil in reports older than the commit clock (`seen`).
        public var clock: String? = nil
        /// With the `committed` clock: the deliveries the tasks' progress records add up to
        /// (`observed` is what the reader counted afterwards).
        public var committedDeliveries: Int? = nil
        /// With the `committed` clock: publish to the reader having counted every delivery,
        /// read after the clock stopped (not a throughput figure).
        public var countedSeconds: Double? = nil
        /// The average value size of the deliveries the reader counted, to compare with the
        /// ceiling's `averageRecordBytes`; nil in reports written before the bench measured it.
        public var averageRecordBytes: Double? = nil
        /// What each Redis master did during a broadcast (one entry on a single node).
        public var redisNodes: [RedisNodeUsage]? = nil
        /// Slots by the fan-out plan that read them, from the event's status (`broadcast`,
        /// `scan`, `sets`).
        public var plans: [String: Int]? = nil
        /// Herald's producers alone writing `expected` records in `statusTasks` transactions,
        /// timed like the broker ceiling (the best of `BenchmarkOptions.sizedCeilingRuns`): what
        /// any transactional fan-out of this size could reach on this broker, without reading
        /// the event, planning it or rendering. Only for expressions narrower than the ceiling.
        public var sizedCeiling: Ceiling? = nil
        /// How many sized-ceiling runs `sizedCeiling` is the best of.
        public var sizedCeilingRuns: Int? = nil
    }

    /// CPU seconds each party used during one measurement, against the wall time: on a
    /// 2-core machine `total / wall` near 2 means the machine, not Herald, was the limit.
    public struct CPUAccount: Sendable, Codable, Hashable {
        public var wallSeconds: Double
        public var workers: Double
        public var broker: Double?
        public var redis: Double?
        public var benchmark: Double
        /// Every process on the machine, this run's included (from `/proc/stat`).
        public var machine: Double?
        /// CPU pressure (`some avg10`, %) at the end: how long runnable tasks waited for a CPU.
        public var cpuPressure: Double?
        /// Of `workers` and `benchmark`: librdkafka's own threads (`rdk:main`, `rdk:broker<id>`:
        /// batching, compression, the protocol), the rest being the threads that call it.
        /// Threads that ended during the measurement are not counted. Absent in reports older
        /// than these fields.
        public var workersLibrdkafka: Double? = nil
        public var benchmarkLibrdkafka: Double? = nil
        /// The median CPU milliseconds of `HostSpeedProbe`'s fixed work during the measurement:
        /// how fast the host's cores ran then (lower is faster). Absent in older reports.
        public var hostProbeMilliseconds: Double? = nil
        /// Seconds the bench waited, before this measurement, for processes that are not part
        /// of the run to stop using the cores (`CPUMeter.waitForQuiet`). Absent in older reports.
        public var quietWaitSeconds: Double? = nil
        public var total: Double { workers + (broker ?? 0) + (redis ?? 0) + benchmark }
        /// CPU seconds of processes that are not part of this run (other work on a shared machine).
        public var others: Double? { machine.map { Swift.max(0, $0 - total) } }
        /// `others` as cores busy on average over the measurement.
        public var othersCores: Double? { others.map { $0 / Swift.max(wallSeconds, 1e-9) } }
        /// Other processes took at least `disturbedCores` of the machine during the measurement,
        /// so its figures (and any ratio built on them) were measured on fewer free cores than
        /// the run's own.
        public var isDisturbed: Bool { (othersCores ?? 0) >= Self.disturbedCores }
        /// A tenth of a core: the bench's own samplers and the kernel stay well under it on a
        /// quiet machine (0.00-0.04); a leftover loop of another job is found above it.
        public static let disturbedCores = 0.1
    }

    public struct Latency: Sendable, Codable, Hashable {
        public var label: String
        public var events: Int
        public var seen: Int
        public var p50Milliseconds: Double
        public var p99Milliseconds: Double
        public var maxMilliseconds: Double
        /// Publish to the worker's `renderedAt` of the delivery (planner, task hop, express
        /// lane): the rest of each latency is the delivery's transaction commit, the broker
        /// making it visible, and the consumer's fetch. Absent in reports older than this field.
        public var renderedP50Milliseconds: Double?
        public var renderedP99Milliseconds: Double?
        /// Publish to the planner's `acceptedAt` (the event was polled and planned).
        public var acceptedP50Milliseconds: Double?
        public var acceptedP99Milliseconds: Double?
        /// Every event in publish order. Absent in reports older than this field.
        public var samples: [LatencySample]?
    }

    /// One one-recipient event of a latency run.
    public struct LatencySample: Sendable, Codable, Hashable {
        /// Seconds after the run's first publish.
        public var publishedSeconds: Double
        /// Publish to the planner's `acceptedAt`, to the delivery's `renderedAt`, to the
        /// moment the reader saw it; nil when not known (never seen: `seenMilliseconds` nil).
        public var acceptedMilliseconds: Double?
        public var renderedMilliseconds: Double?
        public var seenMilliseconds: Double?
    }

    public struct Memory: Sendable, Codable, Hashable {
        public var population: Int
        /// Per worker: RSS before the broadcast and `VmHWM` (peak RSS since start) after it.
        public var baselineRSSBytes: [Int]
        public var peakRSSBytes: [Int]
    }

    /// A broadcast stopped as `DELETE /v1/notifications/{id}` stops it (its stop key), once its
    /// first task had reported.
    public struct Stop: Sendable, Codable, Hashable {
        /// The broadcast's audience and tasks.
        public var audience: Int
        public var tasks: Int
        /// Tasks that had reported, and the deliveries they had committed, when the key was set.
        public var tasksBeforeStop: Int
        public var deliveredBeforeStop: Int
        /// From the stop until the last task reported: no task of the event runs after it.
        public var secondsToLastReport: Double
        /// Deliveries every task reported in the end (what got through).
        public var delivered: Int
        /// Tasks that reported `stopped`.
        public var stoppedTasks: Int
    }

    /// A rehearsal of a broadcast: from the publish to the last task's report, and the audience
    /// its status counted (which must equal the broadcast's).
    public struct Rehearsal: Sendable, Codable, Hashable {
        public var audience: Int
        public var counted: Int
        public var tasks: Int
        public var seconds: Double
        public var previews: Int
    }

    /// A `breaking` event alone, then the same again while a `bulk` broadcast of the main
    /// population is being fanned out (published once the broadcast's first task reported).
    public struct Preemption: Sendable, Codable, Hashable {
        public var breakingAudience: Int
        public var bulkAudience: Int
        /// Publish to the last task's commit of the breaking event: alone, and during the bulk one.
        public var aloneSeconds: Double
        public var duringSeconds: Double
        /// Publish to the last commit of the bulk broadcast.
        public var bulkSeconds: Double
        /// Deliveries counted on the topic: each must equal its audience.
        public var breakingDelivered: Int
        public var bulkDelivered: Int
    }

    /// One hub's breaking alert while another hub of the deployment is busy: the hubs share the
    /// workers, the broker and Redis, and nothing but the express lanes keeps them apart.
    public struct HubIsolation: Sendable, Codable, Hashable {
        /// What the busy hub did meanwhile ("a broadcast to 1,000,000", ...).
        public var load: String
        public var alertAudience: Int
        /// Publish to the last task's commit of the alert: alone, and during the load.
        public var aloneSeconds: Double
        public var duringSeconds: Double
        /// How long the load ran from the alert's publish; the alert was measured under load
        /// only when this is longer than `duringSeconds`.
        public var loadSecondsAfterAlert: Double
        /// Deliveries counted on the topic: the alert's, and the busy hub's broadcast's (nil
        /// for a flood of registrations); each must equal its audience.
        public var alertDelivered: Int
        public var loadAudience: Int?
        public var loadDelivered: Int?
        /// A flood's registrations written per second in the second before the alert's
        /// publish, and while the alert ran (they wait for it: `AlertYield`).
        public var loadPerSecondBefore: Double? = nil
        public var loadPerSecondDuring: Double? = nil
        /// Which pair (the alert alone, then under the load) of its load this is, from 1.
        public var pair: Int? = nil

        /// The alert under the load over the alert alone.
        public var ratio: Double { duringSeconds / Swift.max(aloneSeconds, 1e-9) }
        /// The load still ran when the alert's last task committed.
        public var wasLoaded: Bool { loadSecondsAfterAlert > duringSeconds }
    }

    public struct Reindex: Sendable, Codable, Hashable {
        public var registrations: Int
        public var produceSeconds: Double
        public var seconds: Double
        public var perSecond: Double
        public var applied: Int
        /// Only for populations small enough to digest (<= 200,000).
        public var identicalToSeeded: Bool?
    }

    public struct Schedules: Sendable, Codable, Hashable {
        public var schedules: Int
        /// How far ahead of their time they were published.
        public var leadSeconds: Int
        /// From the first publish to the last acknowledged.
        public var publishSeconds: Double
        /// From the first publish to every schedule in the scheduler's index.
        public var indexedSeconds: Double
        /// Distinct schedules whose released event was seen; records seen again for one.
        public var released: Int
        public var duplicates: Int
        /// Released events seen before their time (never expected).
        public var early: Int
        /// Lateness: the moment this process's `read_committed` consumer saw the released event,
        /// minus its `sendAt`.
        public var seenP50Milliseconds: Double
        public var seenP99Milliseconds: Double
        public var seenMaxMilliseconds: Double
        /// Lateness by the released record's timestamp (the scheduler enqueued it, before its commit).
        public var stampedP50Milliseconds: Double
        public var stampedP99Milliseconds: Double
        public var stampedMaxMilliseconds: Double
        /// The scheduler process's RSS before the schedules were published, and its peak.
        public var schedulerBaselineRSSBytes: Int
        public var schedulerPeakRSSBytes: Int
        /// CPU the scheduler process used from the moment all were indexed until all were seen.
        public var schedulerCPUSeconds: Double
    }

    public struct Sender: Sendable, Codable, Hashable {
        public var deliveries: Int
        /// The local APNs server's ceiling: h2load's requests per second against it (same
        /// connections and streams as the sender), nil when h2load is missing.
        public var ceilingPerSecond: Double?
        public var ceilingCommand: String?
        /// Requests the server answered per second, from the sender's first request to its last.
        public var sendsPerSecond: Double
        public var sendSeconds: Double
        /// Receipts committed on `herald.receipts` (read back after the run) and their outcomes.
        public var receipts: Int
        public var sent: Int
        /// Requests the server received beyond one per delivery.
        public var extraRequests: Int
        /// The sender process's RSS when it had started, and its peak.
        public var baselineRSSBytes: Int
        public var peakRSSBytes: Int
        public var cpuSeconds: Double
        public var connections: Int
        public var streams: Int
        /// `apns` or `webpush` (absent in reports from before Web Push: apns).
        public var platform: String?
        /// Web Push: what encrypting one message costs on one core.
        public var encryption: Encryption?

        public struct Encryption: Sendable, Codable, Hashable {
            /// Herald's RFC 8291 encryption, microseconds of one core per message.
            public var heraldMicroseconds: Double
            /// pywebpush's, measured in the same run; nil when it could not be installed.
            public var pywebpushMicroseconds: Double?
            public var pywebpushCommand: String
        }
    }

    /// What a reader feels: a broadcast from its publish to every push accepted by the local
    /// APNs and FCM servers, with the fan-out workers and the sender workers on the same
    /// machine, once per count of sender workers, beside those servers' own ceilings.
    public struct Reach: Sendable, Codable, Hashable {
        public var population: Int
        /// h2load against the local APNs and FCM servers in the same run, with the connections
        /// and streams one sender worker opens to each; nil when h2load is missing.
        public var apnsCeilingPerSecond: Double?
        public var fcmCeilingPerSecond: Double?
        public var ceilingCommand: String?
        public var connections: Int
        public var streams: Int
        public var runs: [Run] = []

        /// The servers' ceiling for `run`'s mix: a push costs the servers 1/ceiling of its
        /// platform's, so the mix's is the inverse of the weighted sum.
        public func mixedCeiling(_ run: Run) -> Double? {
            guard let apns = apnsCeilingPerSecond, let fcm = fcmCeilingPerSecond, apns > 0, fcm > 0 else { return nil }
            let total = Double(run.sentByPlatform.values.reduce(0, +))
            guard total > 0 else { return nil }
            let apnsShare = Double(run.sentByPlatform["apns"] ?? 0) / total
            let fcmShare = Double(run.sentByPlatform["fcm"] ?? 0) / total
            let perPush = apnsShare / apns + fcmShare / fcm
            return perPush > 0 ? 1 / perPush : nil
        }

        public struct Run: Sendable, Codable, Hashable {
            public var senders: Int
            public var expected: Int
            /// Deliveries committed and receipts `sent`, in milliseconds from the publish (the
            /// event's status `reach`).
            public var committed: ReachCurve?
            public var sent: ReachCurve?
            /// Receipts `sent` per platform (`apns`, `fcm`), and any other outcome.
            public var sentByPlatform: [String: Int]
            public var notSent: Int
            /// Receipts sent per second from the publish to the last.
            public var pushesPerSecond: Double
            /// CPU seconds of the sender processes from the publish to the last receipt, and
            /// the same of the fan-out workers.
            public var senderCPUSeconds: Double
            public var fanoutCPUSeconds: Double
            /// The largest sender's RSS when it was ready, once a tenth of the pushes were
            /// sent, and at its peak.
            public var senderBaselineRSSBytes: Int
            public var senderTenthRSSBytes: Int
            public var senderPeakRSSBytes: Int
        }
    }

    /// One `herald worker` with its default roles and one `herald api` with nothing to do, on
    /// topics and a Redis prefix of their own, run with Herald's production fetch waits rather
    /// than the embedded stack's: the CPU time (`utime + stime` of `/proc/<pid>/stat`) each
    /// process used over `cpu.wallSeconds` after a warm-up of `warmupSeconds`.
    public struct Idle: Sendable, Codable, Hashable {
        /// `herald worker --roles` of the measured worker: its default.
        public var workerRoles: String
        /// The fetch waits both processes ran with (`HERALD_PLANNER_FETCH_WAIT_MS`,
        /// `HERALD_TASK_FETCH_WAIT_MS`): Herald's defaults, whatever the run's own are.
        public var plannerFetchWaitMs: Int
        public var taskFetchWaitMs: Int
        /// Seconds the processes ran with nothing to do before the measurement began.
        public var warmupSeconds: Double
        /// CPU seconds of each process over the measurement.
        public var workerCPUSeconds: Double
        public var apiCPUSeconds: Double
        /// The whole measurement: `workers` is the worker and the API together; `broker` and
        /// `redis` (with its forked children) are the run's servers, nil when not found here.
        public var cpu: CPUAccount

        /// CPU seconds over the measurement's wall time, in percent of one core.
        private func percent(_ seconds: Double) -> Double { 100 * seconds / Swift.max(cpu.wallSeconds, 1e-9) }

        public var workerPercentOfCore: Double { percent(workerCPUSeconds) }
        public var apiPercentOfCore: Double { percent(apiCPUSeconds) }
        /// The worker and the API together: what `Target.idleHeraldPercentOfCore` judges.
        public var heraldPercentOfCore: Double { percent(workerCPUSeconds + apiCPUSeconds) }
        public var brokerPercentOfCore: Double? { cpu.broker.map { percent($0) } }
        public var redisPercentOfCore: Double? { cpu.redis.map { percent($0) } }
    }
}
