/// What one `herald bench` run measures. Defaults finish in a few minutes on a 2-core machine.
public struct BenchmarkOptions: Sendable {
    /// Registrations of the main population (broadcast, expression event, latency).
    public var registrations: Int = 1_000_000
    /// Populations whose worker peak RSS is measured during a broadcast. The main population
    /// is reused when its size is listed; other sizes get their own short phase.
    public var memorySizes: [Int] = [100_000, 1_000_000]
    /// Template variants of the template-diversity populations (`SeedPopulation.templateVariants`):
    /// each is broadcast to and compared with the first. Empty: none.
    public var templateVariants: [Int] = [1, 1_000]
    /// The size of each template-diversity population.
    public var templatePopulation: Int = 100_000
    /// Registrations of the frequency-cap population, seeded into two hubs of one phase: the
    /// default hub without caps and one with `capRules`; bulk broadcasts to one and the other
    /// alternate, `capPairs` of each, compared pair by pair (0: none).
    public var capPopulation: Int = 1_000_000
    /// Pairs of broadcasts (one without caps, one with) of the frequency-cap phase.
    public var capPairs: Int = 5
    /// The capped hub's rules (as `HERALD_FREQUENCY_CAPS` reads them): more alerts than
    /// `capPairs`, so every capped broadcast delivers to everyone and the rows compare the cost
    /// of counting, not a smaller audience.
    public var capRules: String = "10/86400:bulk"
    /// Worker processes spawned for the pipeline phases.
    public var workers: Int = 1
    /// Partitions of the task and delivery topics (and of the ceiling topic).
    public var partitions: Int = 8
    /// Records the broker-ceiling phase writes.
    public var ceilingRecords: Int = 400_000
    /// Times each expression row narrower than `ceilingRecords` is compared with Herald's
    /// producers alone writing as many records in as many transactions (`Fanout.sizedCeiling`,
    /// the best kept); 0 skips them.
    public var sizedCeilingRuns: Int = 3
    /// Broadcasts of the main population measured after the other fan-outs, each between
    /// two ceilings of its own (`BenchmarkReport.Rounds`); 0 skips them. Needs the ceiling and
    /// the broadcast phases.
    public var rounds: Int = 3
    /// Each round also fans out the expression (`expression`) after its broadcast, between
    /// ceilings of its own, so the expression is judged on medians too
    /// (`BenchmarkReport.Rounds.expressionMedianRatio`).
    public var roundExpressions: Bool = false
    /// Whether each round runs a broadcast; false (with `roundExpressions`) leaves only the
    /// expression between ceilings, judged by its ratio to them: ten million devices' round
    /// broadcasts would not fit in the embedded broker's memory beside Redis.
    public var roundBroadcasts: Bool = true
    /// Masters of the Redis Cluster the main population's broadcast is measured on once more,
    /// next to the single node (`BenchmarkEnvironment.startRedisCluster`); 0 skips it, and so
    /// does a run whose own Redis is already a cluster.
    public var redisClusterMasters: Int = 3

    /// Deliveries the sender row pushes to the local APNs server (`SenderPhase`); 0 skips it.
    public var senderDeliveries: Int = 200_000
    /// Deliveries the Web Push row encrypts and pushes to the local Web Push service; 0 skips it.
    public var webPushDeliveries: Int = 200_000
    /// Devices of the reach phase (`PopulationPhase.Kind.reach`): a broadcast to them timed from
    /// its publish to every push accepted by the local APNs and FCM servers, once for each count
    /// of sender workers in `reachSenders`; 0 skips it.
    public var reachPopulation: Int = 1_000_000
    /// Sender worker processes of each of the reach phase's broadcasts.
    public var reachSenders: [Int] = [1, 2]

    /// Schedules published due in the same second for the scheduler's row (`SchedulePhase`); 0 skips it.
    public var schedules: Int = 10_000
    /// How far ahead of their time the schedules are published.
    public var scheduleLeadSeconds: Int = 30

    /// What an idle Herald costs (`IdlePhase`): a worker with its default roles and the API,
    /// nothing to do, measured last. Needs `BenchmarkEnvironment.productionDefaults`.
    public var runIdle: Bool = true
    /// Seconds the idle row's processes run with nothing to do before their CPU is measured.
    public var idleWarmupSeconds: Int = 60
    /// Seconds over which the idle row's CPU is measured.
    public var idleSeconds: Int = 60

    public var runMicro: Bool = true
    public var runCeiling: Bool = true
    public var runBroadcast: Bool = true
    public var runLatency: Bool = true
    public var runMemory: Bool = true
    /// Stop a broadcast of the main population in flight, and time it.
    public var runStop: Bool = true
    /// Rehearse (`dryRun`) a broadcast of the main population, and time it.
    public var runRehearsal: Bool = true
    /// The audience of the breaking event published during a bulk broadcast (empty: no such row).
    public var preemptionExpression: String = "World && Politics"
    /// Registrations of another hub whose breaking broadcast is timed alone and while the main
    /// hub is busy (a broadcast to the main population, then a flood of registrations); 0: no
    /// such rows.
    public var isolationAudience: Int = 100_000
    /// Pairs (the alert alone, then under the load) per load of the hub isolation rows, judged
    /// by the median of their ratios.
    public var isolationPairs: Int = 3
    /// At most this many registrations written into a third hub through the API's write path,
    /// from a second before the other hub's breaking alert until it is done; 0: no flood row.
    public var isolationFlood: Int = 300_000
    /// Produce the population to a registrations topic and time `herald reindex` of it.
    public var runReindex: Bool = false

    /// How registrations reach Redis: through the indexer's Lua apply script, or the
    /// bulk loader (checked against the Lua path on a small population first).
    public var seedPath: SeedPath = .bulk
    /// Changes per Redis pipeline while seeding.
    public var seedBatch: Int = 2_000
    /// Threads (each with its own Redis connection) building and sending seed pipelines.
    public var seedThreads: Int = 2

    /// Targeted (one-recipient) events per second and how long each latency run lasts.
    public var latencyRate: Int = 20
    public var latencySeconds: Int = 10

    /// The tag expression of the narrower wide event.
    public var expression: String = "(World || Politics) && !Sports"
    /// More expressions measured after it on the main population, each its own row: one tag
    /// (about a third), two tags (about 9 %) and three (about 1.7 %) of the six categories, and
    /// a region without a category (1 %, the narrow audience the targets name).
    public var extraExpressions: [String] = ["World", "World && Politics", "World && Politics && Technology", "Region_Nordic && !Sports"]
    /// Narrow events published together and timed as one row (`burstExpressions`): what a
    /// narrow audience costs per delivery when events follow one another, not the fixed cost
    /// of one event alone. 0: no burst.
    public var burstEvents: Int = 20
    /// The one expression of every burst event, instead of the category triples (nil).
    public var burstExpression: String?

    /// The burst's expressions: `burstExpression` `burstEvents` times, else the triples.
    public var burstSources: [String] {
        burstExpression.map { Array(repeating: $0, count: max(0, burstEvents)) } ?? Self.burstExpressions(burstEvents)
    }

    /// The burst's expressions: every three of the six categories (about 1.7 % of the devices
    /// each), `count` of them, round the list again past twenty.
    public static func burstExpressions(_ count: Int) -> [String] {
        let categories = SeedPopulation.categories
        var triples: [String] = []
        for a in 0..<categories.count {
            for b in (a + 1)..<categories.count {
                for c in (b + 1)..<categories.count { triples.append("\(categories[a]) && \(categories[b]) && \(categories[c])") }
            }
        }
        return (0..<max(0, count)).map { triples[$0 % triples.count] }
    }

    /// Repetitions of each micro-benchmark; the median is reported.
    public var microRuns: Int = 7

    /// Worker processes are given this long to join their groups and finish a warm-up event.
    public var warmupTimeoutSeconds: Int = 90
    /// Upper bound for one fan-out to be fully observed before the run reports a timeout.
    public var eventTimeoutSeconds: Int = 300

    /// What stops a fan-out's clock (and the ceiling's): the commit of its last delivery, or
    /// the reader seeing it.
    public var clock: Clock = .committed

    /// Keep topics and Redis keys afterwards (for inspection).
    public var keepData: Bool = false
    /// Seed of the population generator: the same seed gives the same registrations.
    public var populationSeed: UInt64 = 0x4845_5241_4c44

    public init() {}

    public enum SeedPath: String, Sendable, CaseIterable {
        case lua
        case bulk
    }

    /// How a fan-out (and the ceiling) is timed.
    public enum Clock: String, Sendable, CaseIterable {
        /// Until a `read_committed` reader of the status topic saw the progress record of
        /// every task, each written in the same transaction as the task's deliveries
        /// (`CommitWatcher`); the deliveries are read and counted after the clock stopped.
        case committed
        /// Until a `read_committed` reader of the deliveries topic saw the last delivery,
        /// reading them all while the fan-out runs (the clock used before the commit clock).
        case seen
    }
}

/// A benchmark could not run or could not be trusted (a count mismatch, a worker that
/// exited, a timeout). The message says which phase and what was seen.
public struct BenchmarkError: Error, Sendable, CustomStringConvertible {
    public var code: String
    public var message: String

    public init(_ message: String, code: String = "bench_failed") {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
