/// How to start one `herald worker` process: the command and the environment that points it
/// at the run's topics and Redis prefix. The CLI builds it from its settings, so the worker
/// reads exactly the configuration the benchmark provisioned.
public struct WorkerLaunch: Sendable {
    public var executable: String
    public var arguments: [String]
    /// Added to (and overriding) the benchmark's own environment.
    public var environment: [String: String]

    public init(executable: String, arguments: [String], environment: [String: String]) {
        self.executable = executable
        self.arguments = arguments
        self.environment = environment
    }
}

/// The `herald` subcommand a spawned process runs.
public enum HeraldCommand: String, Sendable, Hashable {
    /// `herald worker --roles <roles>`.
    case worker
    /// `herald api`: the HTTP API (the idle row's).
    case api
}

/// What distinguishes the workers of one phase from those of another.
public struct WorkerSpec: Sendable, Hashable {
    public var names: BenchmarkNames
    /// 0-based index of the worker within its phase; part of its instance id.
    public var index: Int
    /// `herald worker --roles`: the pipeline's own for the population phases.
    public var roles: String = "planner,fanout"
    /// Settings added to the worker's environment (the sender's credentials and servers).
    public var environment: [String: String] = [:]
    /// `worker` for every phase's workers; `api` for the idle row's HTTP API.
    public var command: HeraldCommand = .worker

    public init(
        names: BenchmarkNames, index: Int, roles: String = "planner,fanout", environment: [String: String] = [:],
        command: HeraldCommand = .worker
    ) {
        self.names = names
        self.index = index
        self.roles = roles
        self.environment = environment
        self.command = command
    }

    public var instanceId: String { "\(names.redisPrefix)-\(command == .api ? "api" : "w")\(index)" }
}

/// The topic prefix and Redis prefix of one population phase: unique per run and phase, so
/// nothing is shared with another run, the demo, or a previous phase.
public struct BenchmarkNames: Sendable, Hashable {
    /// Prepended to the topic names (`<topicPrefix>events`, `<topicPrefix>deliveries`, ...).
    public var topicPrefix: String
    /// Prefix of every Redis key of the phase.
    public var redisPrefix: String
    /// The Redis the phase uses instead of the run's (`HERALD_REDIS_URL`), nil for the run's.
    public var redisURL: String?

    public init(topicPrefix: String, redisPrefix: String, redisURL: String? = nil) {
        self.topicPrefix = topicPrefix
        self.redisPrefix = redisPrefix
        self.redisURL = redisURL
    }

    /// The id of the phase's broadcast event. Every delivery record carries it twice (in
    /// `deliveryId` and `eventId`), so the broker ceiling writes its records with this id too:
    /// the same bytes per record as the broadcast it is the reference for.
    public var broadcastEventId: String { "\(redisPrefix)-broadcast" }
}
