import HeraldRedis

/// One configurable value of Herald: its environment variable, its command-line flag, its
/// default and what it does. Every setting is declared once, in `Setting.Key`; `Setting.all`
/// is what `herald config` prints and what docs/configuration.md is generated from.
public struct Setting: Sendable, Hashable {
    public let key: Key
    /// `HERALD_...` environment variable.
    public var environment: String { "HERALD_" + key.rawValue.uppercased().replacingOccurrences(of: "-", with: "_") }
    /// `--...` command-line flag.
    public var flag: String { "--" + key.rawValue }
    public let defaultValue: String
    public let help: String

    /// The settings, in the order `herald config` and docs/configuration.md list them. A new
    /// setting is a case here and its arm in `declaration`; the flag, the environment variable,
    /// the command-line parsing and the reference table all follow from them.
    public enum Key: String, Sendable, CaseIterable {
        case kafkaBrokers = "kafka-brokers"
        case kafkaConfigFile = "kafka-config-file"
        case redisUrl = "redis-url"
        case redisPoolSize = "redis-pool-size"
        case slots
        case redisPrefix = "redis-prefix"
        case topicPrefix = "topic-prefix"
        case eventPartitions = "event-partitions"
        case taskPartitions = "task-partitions"
        case deliveryPartitions = "delivery-partitions"
        case registrationPartitions = "registration-partitions"
        case replicationFactor = "replication-factor"
        case deliveryRetentionHours = "delivery-retention-hours"
        case roles
        case tasksPerBroadcast = "tasks-per-broadcast"
        case deliveriesPerTask = "deliveries-per-task"
        case narrowEvents = "narrow-events"
        case fanoutPlan = "fanout-plan"
        case scanAbovePercent = "scan-above-percent"
        case taskFetchWaitMs = "task-fetch-wait-ms"
        case taskHandoff = "task-handoff"
        case plannerFetchWaitMs = "planner-fetch-wait-ms"
        case bulkLanes = "bulk-lanes"
        case instanceId = "instance-id"
        case abandonedTransactionSeconds = "abandoned-transaction-seconds"
        case sessionTimeoutMs = "session-timeout-ms"
        case leaveGroupOnClose = "leave-group-on-close"
        case lingerMs = "linger-ms"
        case compression
        case allocator
        case apiHost = "api-host"
        case apiPort = "api-port"
        case metricsPort = "metrics-port"
        case hubUri = "hub-uri"
        case policies
        case userTokenKey = "user-token-key"
        case userTokenAudience = "user-token-audience"
        case userTokenIssuer = "user-token-issuer"
        case maxTokenLifetimeSeconds = "max-token-lifetime-seconds"
        case callerRequestsPerSecond = "caller-requests-per-second"
        case hubRequestsPerSecond = "hub-requests-per-second"
        case hubMaxRegistrations = "hub-max-registrations"
        case defaultHubLimits = "default-hub-limits"
        case registrationYieldSeconds = "registration-yield-seconds"
        case testSendWaitSeconds = "test-send-wait-seconds"
        case idSecret = "id-secret"
        case logLevel = "log-level"
        case payloadLimits = "payload-limits"
        case stallReadySeconds = "stall-ready-seconds"
        case stallLiveSeconds = "stall-live-seconds"
        case drainSeconds = "drain-seconds"
        case scheduleToleranceSeconds = "schedule-tolerance-seconds"
        case scheduleHorizonDays = "schedule-horizon-days"
        case defaultTimeZone = "default-time-zone"
        case frequencyCaps = "frequency-caps"
        case quietHoursHoldBreaking = "quiet-hours-hold-breaking"
        case allowDemoKeys = "allow-demo-keys"
        case apnsKeyFile = "apns-key-file"
        case apnsKeyId = "apns-key-id"
        case apnsTeamId = "apns-team-id"
        case apnsTopics = "apns-topics"
        case apnsEndpoint = "apns-endpoint"
        case apnsTeamsFile = "apns-teams-file"
        case fcmServiceAccounts = "fcm-service-accounts"
        case fcmEndpoint = "fcm-endpoint"
        case webpushVapidKey = "webpush-vapid-key"
        case webpushVapidSubject = "webpush-vapid-subject"
        case wnsPackageSid = "wns-package-sid"
        case wnsClientSecret = "wns-client-secret"
        case wnsTokenUrl = "wns-token-url"
        case wnsEndpoint = "wns-endpoint"
        case pushCaFile = "push-ca-file"
        case pushConnections = "push-connections"
        case pushStreams = "push-streams"
        case pushTimeoutSeconds = "push-timeout-seconds"
        case pushMaxAttempts = "push-max-attempts"
        case senderBatch = "sender-batch"
        case senderLoops = "sender-loops"

        /// The default value and the meaning; the switch makes the compiler ask for both.
        var declaration: (defaultValue: String, help: String) {
            switch self {
            case .kafkaBrokers:
                ("127.0.0.1:9092", "Kafka bootstrap servers, comma separated.")
            case .kafkaConfigFile:
                (
                    "",
                    "File of librdkafka properties added to every Kafka client, one key=value per line (# comments): security.protocol, sasl.*, ssl.*, tuning. They override Herald's own values."
                )
            case .redisUrl:
                (
                    "redis://127.0.0.1:6379",
                    "Redis URL: redis://[:password@]host:port[/db] for one Redis, redis+cluster://[:password@]host:port,host:port,... (seed nodes) for a Redis Cluster."
                )
            case .redisPoolSize:
                ("4", "Redis connections per process.")
            case .slots:
                ("256", "Registration slots; fixed for the life of a deployment (recorded in Redis).")
            case .redisPrefix:
                ("herald", "Prefix of every Redis key.")
            case .topicPrefix:
                ("herald.", "Prefix of every Kafka topic name (herald.events, herald.tasks, ...).")
            case .eventPartitions:
                ("4", "Partitions of the events topic (herald topics create).")
            case .taskPartitions:
                ("8", "Partitions of the task topics; bounds fan-out parallelism.")
            case .deliveryPartitions:
                (
                    "10",
                    "Partitions of the deliveries topic: 2 for one-user deliveries, plus at least the task partitions (each bulk lane then writes partitions no other lane writes)."
                )
            case .registrationPartitions:
                ("8", "Partitions of the compacted registrations topic.")
            case .replicationFactor:
                ("1", "Replication factor for created topics (3 in production).")
            case .deliveryRetentionHours:
                ("168", "retention.ms of deliveries and status topics, in hours.")
            case .roles:
                ("planner,fanout,indexer,scheduler", "Worker roles this process runs (any of planner, fanout, indexer, scheduler, sender).")
            case .tasksPerBroadcast:
                (
                    "16",
                    "Tasks a broadcast is split into, at least (an expression gets as many as its audience needs at `deliveries-per-task`, rounded up to a multiple of `bulk-lanes`)."
                )
            case .deliveriesPerTask:
                (
                    "32000",
                    "Registrations per task a wide event aims at: bigger audiences get more tasks (up to one per slot), so each transaction stays this size."
                )
            case .fanoutPlan:
                (
                    "auto",
                    "How an expression's audience is found in each slot: auto (bits where every tag of the expression has a bitmap, else chosen by scan-above-percent), bits (evaluate the tags' bitmaps, read only the audience's packs; scan where a tag has none), scan (stream the slot's views and test each) or sets (Redis set operations)."
                )
            case .scanAbovePercent:
                (
                    "25",
                    "With fanout-plan auto, in a slot where a tag of the expression has no bitmap, the slot is scanned when resolving it with Redis set operations would read at least this percent of its registrations in set members; otherwise set operations run."
                )
            case .narrowEvents:
                (
                    "planner",
                    "Who delivers narrow events (one user, a few slots): planner (in its own transaction, fastest) or express-lane (via the express task topic)."
                )
            case .taskFetchWaitMs:
                (
                    "500",
                    "Longest wait of an idle fetch of the task topics (bulk lanes; express lanes too when the planner delivers narrow events), of the scheduler's topic and of the indexer's, in milliseconds. Apache Kafka answers as soon as a record arrives, so a long wait costs no latency and keeps idle consumers cheap; the embedded stack sets 100 for its broker (Tansu), which answers only when the wait ends."
                )
            case .taskHandoff:
                (
                    "direct",
                    "How an idle bulk lane learns of tasks its own process's planner has just committed: direct (reads their partition at once) or fetch (only through its consumer's next fetch)."
                )
            case .plannerFetchWaitMs:
                (
                    "500",
                    "Longest wait of an idle fetch of the events topic by the planner, in milliseconds. Apache Kafka answers as soon as an event arrives, so a long wait costs no latency; the embedded stack sets 5 for its broker (Tansu), which answers only when the wait ends and spends CPU on every fetch (13 % of a core at 5 ms, 6 % at 20 ms)."
                )
            case .bulkLanes:
                (
                    "2",
                    "Bulk fan-out lanes per worker process, each a consumer of the task topic with its own Redis connection and transactional producer."
                )
            case .instanceId:
                ("", "Stable instance name for transactional ids (default: host name and pid).")
            case .abandonedTransactionSeconds:
                (
                    "30",
                    "A worker's transactional id not seen alive for this many seconds (5 to 3600) is fenced by another worker, which aborts the transaction it left open: readers of the partitions it wrote to wait at most this long after a worker dies, on any broker and whatever instance id its successor has."
                )
            case .sessionTimeoutMs:
                ("10000", "Kafka consumer group session timeout.")
            case .leaveGroupOnClose:
                (
                    "true",
                    "Whether a closing consumer leaves its group at once (true) or is dropped by the broker after the session timeout (false). The embedded broker (Tansu 0.6) never forms a group again after its leader leaves while it re-forms, so the embedded stack sets false."
                )
            case .lingerMs:
                (
                    "1000",
                    "Delivery producer linger (batching delay) of the bulk lanes, in milliseconds. A lane writes each task to one partition and flushes when the task ends, so this only has to outlast the broker's answer; lanes that partition by key (no express partitions reserved) use at most 25."
                )
            case .compression:
                ("lz4", "Producer compression codec: none, gzip, snappy, lz4, zstd.")
            case .allocator:
                (
                    "tuned",
                    "glibc malloc of the process: tuned (fixed thresholds that keep librdkafka's batch buffers in the heap instead of returning them to the kernel after every batch) or glibc (its adaptive defaults). MALLOC_*_ variables or glibc.malloc tunables set by the operator win over tuned."
                )
            case .apiHost:
                ("127.0.0.1", "Bind address of the HTTP API and of the worker's /metrics and /health (containers set 0.0.0.0).")
            case .apiPort:
                ("8080", "HTTP API port.")
            case .metricsPort:
                ("9090", "Worker port for /metrics and /health (0 disables).")
            case .hubUri:
                ("http://localhost:8080/", "Resource URI that shared-access signatures are issued for.")
            case .policies:
                ("", "Shared-access policies: name:rights:key;... (rights from listen,send,manage joined with +).")
            case .userTokenKey:
                ("", "HS256 key for user tokens (notify-users); empty disables user tokens.")
            case .userTokenAudience:
                ("", "When set, a user token's aud claim must contain this value.")
            case .userTokenIssuer:
                ("", "When set, a user token's iss claim must equal this value.")
            case .maxTokenLifetimeSeconds:
                (
                    "2678400",
                    "The longest a token may still be valid for, in seconds (60 to a year; 31 days by default): a SharedAccessSignature whose se, or a user token whose exp, lies further ahead is refused with 401 token_lifetime_too_long."
                )
            case .callerRequestsPerSecond:
                (
                    "1000",
                    "API requests per second of one caller (a shared-access policy of a hub, or a user) in each API process, with bursts of twice as many; past it, 429 rate_limited with Retry-After. 0: no limit."
                )
            case .hubRequestsPerSecond:
                (
                    "5000",
                    "API requests per second to one hub, all its callers together, in each API process (bursts of twice as many), counted apart for its sends (notifications) and for the rest (registrations, installations), so a flood of registrations never holds back an alert; past it, 429 rate_limited with Retry-After. 0: no limit."
                )
            case .hubMaxRegistrations:
                (
                    "10000000",
                    "Live registrations of a hub other than the default one whose limits set no maxRegistrations (Azure Notification Hubs' Standard tier holds 10 million devices); past it, 403 quota_exceeded. 0: no limit."
                )
            case .defaultHubLimits:
                (
                    "",
                    "The default hub's limits, as a hub document's limits member: JSON such as {\"maxRegistrations\":1000000,\"maxRegistrationsPerHandle\":10,\"maxTagsPerRegistration\":60,\"maxTemplates\":1000,\"sendsPerMinute\":600}, each member optional, with the ranges of docs/api.md (Hubs). The API checks them as for any hub, so the public Listen key cannot register without bound (HERALD_HUB_MAX_REGISTRATIONS is for the other hubs). Empty: no limits."
                )
            case .registrationYieldSeconds:
                (
                    "5",
                    "While a breaking alert fans out anywhere in the deployment, a registration or installation write (and an indexer batch) waits for it to end, at most this many seconds (0 to 60), so a flood of registrations does not slow the alert. 0: writes never wait."
                )
            case .testSendWaitSeconds:
                (
                    "15",
                    "How long the answer to an Azure test send (?test) waits for its devices' receipts, in seconds (1 to 300); a device still unanswered then is reported as not answered yet."
                )
            case .idSecret:
                ("", "Secret that signs issued registration ids (required in production).")
            case .logLevel:
                ("info", "trace, debug, info, notice, warning, error, critical.")
            case .payloadLimits:
                (
                    "apns=4096,fcm=4096,wns=5120,webpush=3993",
                    "Largest rendered payload per platform, in bytes (each from 256 to 65536); a larger rendition is skipped with reason payload_too_large, and registration refuses templates whose fixed text passes it."
                )
            case .stallReadySeconds:
                (
                    "60",
                    "A worker reports not ready (/health/ready 503) once one of its loops has held input this long without committing it."
                )
            case .stallLiveSeconds:
                (
                    "300",
                    "A worker reports not live (/health/live 503, so the orchestrator restarts it) once a loop has been stalled this long."
                )
            case .drainSeconds:
                (
                    "30",
                    "Longest graceful shutdown: past it the roles are cancelled, and 10 s later the process exits with status 2 whatever is still running."
                )
            case .scheduleToleranceSeconds:
                (
                    "60",
                    "A sendAt at most this many seconds in the past is sent at once; one further back is refused (400, or the dead-letter topic)."
                )
            case .scheduleHorizonDays:
                (
                    "30",
                    "How far ahead a schedule may reach: a sendAt, or the last release of a sendAtLocal, beyond it is refused."
                )
            case .defaultTimeZone:
                (
                    "UTC",
                    "IANA time zone of registrations and installations without a timeZone, for sendAtLocal."
                )
            case .frequencyCaps:
                (
                    "",
                    "Frequency caps of the default hub (other hubs set theirs with PUT /v1/hubs/{hub} or herald hubs caps): maxAlerts/windowSeconds with an optional :urgency+urgency (normal+bulk when not named), several separated by commas, e.g. 3/86400,1/3600:bulk. A device past a cap is skipped as capped. Empty: no cap."
                )
            case .quietHoursHoldBreaking:
                (
                    "false",
                    "Whether the default hub holds breaking alerts in devices' quiet hours too, like any other (other hubs: quietHoursHoldBreaking in PUT /v1/hubs/{hub}). false: breaking news goes through quiet hours."
                )
            case .allowDemoKeys:
                (
                    "false",
                    "true lets herald api and herald worker start with the demo keys of docker-compose.yml or without an id secret (never in production; the embedded stack always allows them)."
                )
            case .apnsKeyFile:
                ("", "Sender: the APNs signing key (.p8 file) of one Apple team; with apns-key-id, apns-team-id and apns-topics.")
            case .apnsKeyId:
                ("", "Sender: the 10-character key id of apns-key-file.")
            case .apnsTeamId:
                ("", "Sender: the 10-character Apple team id of apns-key-file.")
            case .apnsTopics:
                ("", "Sender: the bundle ids (apns-topic) the team's key pushes for, comma separated; the first is the default.")
            case .apnsEndpoint:
                ("production", "Sender: APNs endpoint of apns-key-file: production, sandbox, or an https:// base URL.")
            case .apnsTeamsFile:
                (
                    "",
                    "Sender: a JSON file of more APNs teams, [{\"keyFile\", \"keyId\", \"teamId\", \"topics\": [..], \"endpoint\"}]; each team gets its own connections."
                )
            case .fcmServiceAccounts:
                ("", "Sender: Google service-account JSON files, comma separated, one per Firebase project (the first is the default).")
            case .fcmEndpoint:
                ("https://fcm.googleapis.com", "Sender: FCM HTTP v1 base URL.")
            case .webpushVapidKey:
                (
                    "",
                    "Sender: the VAPID private key browsers were subscribed with (its public half is their applicationServerKey): the 32-byte P-256 scalar in base64url, or a PEM block. Set it to send Web Push."
                )
            case .wnsPackageSid:
                (
                    "",
                    "Sender: the Windows app's package security identifier (ms-app://s-1-15-2-...) from the Partner Center. Set it to send to WNS."
                )
            case .wnsClientSecret:
                ("", "Sender: the Windows app's client secret from the Partner Center. Required with the package SID.")
            case .wnsTokenUrl:
                ("https://login.live.com/accesstoken.srf", "Sender: WNS's OAuth 2.0 token endpoint.")
            case .wnsEndpoint:
                (
                    "",
                    "Sender: an https:// origin every WNS channel URI is sent to instead of its own host (a local WNS server); empty sends to the channel URI."
                )
            case .webpushVapidSubject:
                ("", "Sender: the VAPID contact push services may write to: mailto:<address> or an https:// URL. Required with the key.")
            case .pushCaFile:
                ("", "Sender: a PEM file of extra certificate authorities to trust besides the system's (local push servers).")
            case .pushConnections:
                ("2", "Sender: HTTP/2 connections per APNs team and per FCM project.")
            case .pushStreams:
                ("100", "Sender: requests in flight per connection at most.")
            case .pushTimeoutSeconds:
                ("10", "Sender: the longest wait for a push service's answer; past it the attempt is retried.")
            case .pushMaxAttempts:
                ("5", "Sender: requests per delivery at most (429, 5xx, timeouts and lost connections are retried with backoff).")
            case .senderBatch:
                ("2500", "Sender: deliveries per transaction (their receipts and offsets are committed together).")
            case .senderLoops:
                ("2", "Sender: batches in hand at once, each with its own consumer and transaction, sharing the connections.")
            }
        }
    }

    public static let all: [Setting] = Key.allCases.map(Setting.init)

    /// Settings whose values are credentials: never printed.
    public static let secrets: Set<Key> = [.policies, .userTokenKey, .idSecret, .webpushVapidKey, .wnsClientSecret]

    /// `value` as it may be printed: credentials as `(set)`, a Redis URL without its password.
    public static func shown(_ key: Key, _ value: String) -> String {
        if secrets.contains(key) { return value.isEmpty ? "" : "(set)" }
        if key == .redisUrl { return RedisConfiguration.redacting(value) }
        return value
    }

    public init(_ key: Key) {
        self.key = key
        (defaultValue, help) = key.declaration
    }
}
