import Foundation
import HeraldDomain
import HeraldKafka
import HeraldRedis
import HeraldRegistry
import HeraldStreams

/// Settings of the pipeline roles (planner, fan-out) and the tools built on them. One struct,
/// documented defaults; the app maps flags and environment variables onto it in one place.
public struct PipelineConfiguration: Sendable {
    /// Kafka `bootstrap.servers`.
    public var bootstrapServers: String = "127.0.0.1:9092"
    public var redis: RedisConfiguration = RedisConfiguration()
    public var topics: HeraldTopics = HeraldTopics()
    /// Must match `herald:meta` `slots` (see docs/redis-layout.md).
    public var layout: SlotLayout = SlotLayout()

    /// Consumer group of the planner role on `topics.events`.
    public var plannerGroup: String = "herald-planner"
    /// Consumer group of the fan-out role on `topics.tasks`.
    public var fanoutGroup: String = "herald-fanout"
    /// Consumer group of the fan-out role on `topics.expressTasks`.
    public var expressGroup: String = "herald-fanout-express"

    /// Names this worker's transactional producers (`<prefix>-<role>-<instanceId>[-<lane>]`).
    /// Give a restarted worker the same id (for example the pod name of a StatefulSet): its
    /// first transaction then fences the dead instance and aborts its open transaction at
    /// once, instead of leaving it to `transactionTimeoutMs`. Two live workers must never
    /// share an id.
    public var instanceId: String = PipelineConfiguration.defaultInstanceId()
    public var transactionalIdPrefix: String = "herald"
    /// How long the broker keeps an abandoned transaction open (it holds back
    /// `read_committed` readers of the partitions it wrote to until then).
    public var transactionTimeoutMs: Int = 30_000
    /// A worker's transactional id not seen alive for this long is fenced by another worker,
    /// which aborts its open transaction (`AbandonedTransactions`): on any broker, also one
    /// that never times transactions out, and under whatever instance id the dead worker's
    /// successor runs (`HERALD_ABANDONED_TRANSACTION_SECONDS`).
    public var abandonedTransactionAfter: Duration = .seconds(30)

    /// Consumer group session; Tansu delays a join by about half of this (tests use 6000).
    public var sessionTimeoutMs: Int = 10_000
    /// Whether consumers leave their groups when they close (false on Tansu, the embedded
    /// broker: `KafkaConsumerConfiguration.leaveGroupOnClose` says why).
    public var leaveGroupOnClose: Bool = true

    /// Limits the planner validates events with (size, properties, tag expression).
    public var eventLimits: EventLimits = .default
    /// How late a `sendAt` may be, how far ahead a schedule may reach, the default zone.
    public var scheduleRules: ScheduleRules = .default
    /// Consumer group of the scheduler role (on `topics.scheduled`).
    public var schedulerGroup: String = "herald-scheduler"
    /// The time schedules are judged and released by (the planner's and the scheduler's);
    /// tests move it instead of waiting for hours.
    public var scheduleClock: @Sendable () -> Date = { Date() }
    /// Planner: the default hub's frequency caps (`HERALD_FREQUENCY_CAPS`; other hubs' are in
    /// their definitions).
    public var frequencyCaps: [FrequencyCap] = []
    /// Planner: whether the default hub holds breaking alerts in quiet hours too
    /// (`HERALD_QUIET_HOURS_HOLD_BREAKING`).
    public var quietHoursHoldBreaking = false
    /// Fan-out: the largest rendered payload per platform; larger renditions are skipped with
    /// reason `payload_too_large` (`HERALD_PAYLOAD_LIMITS`).
    public var payloadLimits: PayloadLimits = .default
    /// Longest graceful shutdown of a worker (`HERALD_DRAIN_SECONDS`): past it the roles are
    /// cancelled, and shortly after the process exits whatever is still running.
    public var drainTimeout: Duration = .seconds(30)
    /// Planner: events per transaction.
    public var plannerBatchSize: Int = 200
    /// Planner: deliver the tasks of narrow events (one user, one installation, a few slots)
    /// inside the planner's own transaction instead of writing them to `herald.tasks.express`
    /// for an express lane: one transaction and one fetch fewer between publish and delivery.
    /// Off, express lanes deliver them (they also serve tasks that other planners wrote).
    public var plannerDeliversNarrowEvents: Bool = true
    /// How far ahead an express lane running a breaking alert's tasks says its signal ends (its
    /// field of `SlotLayout.breakingKey`, renewed once a third of it has passed and shortened to
    /// `breakingSignalLingerMilliseconds` when the lane's batch is done): the deployment's
    /// registration writes wait while a signal lasts (`AlertYield`), and a crashed worker's
    /// ends on its own. 0: no signal.
    public var breakingSignalMilliseconds: Int = 3_000
    /// How long the signal lasts after a lane's batch of the alert's tasks is done, so the gap
    /// before its next batch does not let the writers back in between.
    public var breakingSignalLingerMilliseconds: Int = 500
    /// Planner: the longest an idle fetch of `herald.events` waits for data
    /// (`HERALD_PLANNER_FETCH_WAIT_MS`). Apache Kafka answers a waiting fetch as soon as data
    /// arrives, so a long wait costs no latency and keeps an idle consumer cheap for the worker
    /// and the broker. The embedded broker (Tansu) answers an idle fetch only when its wait ends
    /// and reads its storage for each: the embedded stack and the tests set
    /// ``EmbeddedBrokerWaits`` (docs/decisions/fetch-waits.md).
    public var plannerFetchWaitMaxMs: Int = 500
    /// Fan-out: the longest an idle fetch of a task topic waits (bulk lanes; express lanes
    /// too while the planner delivers narrow events, since their topic is then idle), and the
    /// scheduler's fetch of its topic. Free on Apache Kafka like the planner's; on Tansu it is
    /// how soon a lane sees its first task (later tasks are already prefetched).
    public var taskFetchWaitMaxMs: Int = 500
    /// Fan-out: an idle bulk lane reads the partitions its own process's planner has just
    /// written tasks to at once, beside its group consumer, instead of waiting for that
    /// consumer's fetch (`HERALD_TASK_HANDOFF=direct`; `DirectReads`). A notice wakes the
    /// lane's waiting poll (`KafkaConsumer.wake`): an idle lane does not poll for notices.
    public var directTaskReads: Bool = true
    public var planner: FanoutPlanner.Configuration = FanoutPlanner.Configuration()
    /// Planner de-duplication claim lifetime (`herald:event:<id>`), 7 days.
    public var eventClaimTTLSeconds: Int = 604_800
    /// Status (`herald:status:<id>`) and progress lifetime in Redis, 7 days.
    public var statusTTLSeconds: Int = PipelineConfiguration.defaultStatusTTLSeconds
    public static let defaultStatusTTLSeconds = 604_800

    /// Fan-out: bulk lanes per worker process (each a consumer of `topics.tasks` with its own
    /// Redis connection and transactional producer).
    public var bulkLanes: Int = 2
    /// Fan-out: express lanes per worker process.
    public var expressLanes: Int = 1
    /// Small tasks handled in one transaction by an express lane.
    public var expressBatchSize: Int = 100
    /// Partitions of the deliveries topic written only by express lanes (the first N); bulk
    /// lanes write the others. A `read_committed` reader cannot read past a transaction that
    /// is still open on a partition, so without this a one-user delivery waits behind a
    /// broadcast's open transaction on its partition. 0 spreads every delivery by key.
    /// Ignored when the topic has no more partitions than this. Two, so that one is readable
    /// while a transaction is open on the other (see `TaskExecutor.choosePartition`). Give the
    /// topic at least this many partitions more than `herald.tasks`: each bulk lane then writes
    /// the deliveries partitions of its own task partitions only.
    public var expressDeliveryPartitions: Int = 2
    /// Members per `SSCAN` page of an expression's audience (their packs come with one `HMGET`).
    public var scanCount: Int = 1_000
    /// A broadcast reads a slot of at most this many registrations with one `HGETALL` of its
    /// view packs (a snapshot), a bigger one in runs of packs holding about this many each.
    /// Bounds one read's reply in the worker's memory (about 3 MB at 16,384 views) and the
    /// time Redis spends on one command.
    public var snapshotReadLimit: Int = 16_384
    /// How an expression's audience is found in each slot (`FanoutPlanMode`): `auto` takes
    /// `bits` where every tag of the expression has a bitmap, else chooses by
    /// `scanAbovePercent`; `bits`, `scan` and `sets` force one plan (tests, measurements;
    /// `bits` scans the slots where a tag has no bitmap).
    public var fanoutPlan: FanoutPlanMode = .auto
    /// In `auto`, a slot where a tag of the expression has no bitmap is scanned (its packs
    /// streamed and filtered in the worker) when resolving it with Redis set operations would
    /// read at least this percent of its registrations in set members
    /// (`TagSetPlan.estimatedReads`); otherwise the set plan runs.
    /// Measured: an expression built from tags each on a third of the devices was cheaper
    /// scanned down to a 1.7 % audience (docs/decisions/expression-plans.md).
    public var scanAbovePercent: Int = 25
    /// Lifetime of the `herald:{s}:tmp:*` scratch sets in case a worker dies before `DEL`.
    public var temporaryTTLSeconds: Int = 300

    /// Delivery producer tuning: the hot path's throughput knobs (bulk lanes; express lanes
    /// send at once).
    ///
    /// The linger of a bulk lane that writes each task to one partition (the normal case,
    /// `deliveryLingerMs(onePartitionPerTask:)`). Every task ends with a flush, so the linger
    /// never delays a delivery anyone waits for; it only has to outlast the broker's answer.
    /// librdkafka's idempotent producer keeps one produce request per partition in flight,
    /// and a batch whose linger runs out while one is in flight makes its broker thread poll
    /// without sleeping until the answer comes: with 25 ms, a broker answering in 40-80 ms
    /// more than doubled the worker's CPU per delivery (docs/decisions/lane-producer.md).
    public var deliveryLingerMs: Int = 1_000
    /// The most a lane that partitions its deliveries by key lingers (a deliveries topic with
    /// no express partitions reserved): its batches spread over every partition, so none fills
    /// under `deliveryQueueMaxKbytes` and each is sent by its linger. 25 ms filled them during
    /// a broadcast; against 5 ms the broker spent about a third less CPU per delivery.
    public static let keyedDeliveryLingerMs = 25
    public var deliveryCompression: KafkaCompression = .lz4
    public var deliveryBatchSize: Int = 1_000_000
    public var deliveryQueueMaxMessages: Int = 200_000
    /// Caps librdkafka's local queue (queued and in flight) in KiB: about 1.9 batches of
    /// `deliveryBatchSize`. An idempotent producer sends one produce request per partition at
    /// a time (librdkafka counts that partition's in-flight *records* against its limit of 5
    /// requests), and a lane writes one partition. With more queued, librdkafka's broker
    /// thread woke 0.7 times per delivery in the bench's broadcasts (our reading of its
    /// source: a full batch waiting behind the request makes it poll without sleeping until
    /// the answer comes), a fifth of that machine's CPU. Under two batches, the next one is still filling when the answer comes, the
    /// thread sleeps meanwhile, and the lane waits for queue space instead (1 ms steps).
    /// Raise it with `deliveryBatchSize`, and keep it under two batches (docs/performance.md).
    public var deliveryQueueMaxKbytes: Int = 1_900

    /// The bulk delivery producer's linger: `deliveryLingerMs` when each transaction writes
    /// one partition, at most `keyedDeliveryLingerMs` when records are partitioned by key.
    public func deliveryLingerMs(onePartitionPerTask: Bool) -> Int {
        onePartitionPerTask ? deliveryLingerMs : min(deliveryLingerMs, Self.keyedDeliveryLingerMs)
    }

    /// The sender role (`herald worker --roles sender`).
    public var sender = SenderConfiguration()

    /// How often lanes sample consumer lag for `herald_consumer_lag`.
    public var lagSampleInterval: Duration = .seconds(15)

    /// Librdkafka properties added to every client (security settings, `debug`).
    public var kafkaExtra: [String: String] = [:]

    public init() {}

    /// The fetch waits for the embedded broker (Tansu), which answers an idle fetch only when its
    /// wait ends: short for the planner (publish to read p90 4.2 ms at 5 ms) and moderate for
    /// the task topics (an idle worker cost Tansu 12 % of a core at 100 ms, 25 % at 10 ms).
    public enum EmbeddedBrokerWaits {
        public static let plannerMs = 5
        public static let tasksMs = 100
    }

    /// These settings with ``EmbeddedBrokerWaits`` (the tests' and the bench's own pipelines).
    public func withEmbeddedBrokerWaits() -> PipelineConfiguration {
        var copy = self
        copy.plannerFetchWaitMaxMs = EmbeddedBrokerWaits.plannerMs
        copy.taskFetchWaitMaxMs = EmbeddedBrokerWaits.tasksMs
        return copy
    }

    public static func defaultInstanceId() -> String {
        let host = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "worker"
        return "\(host)-\(UUID().uuidString.prefix(8).lowercased())"
    }

    // MARK: Client settings (the one place they are derived)

    func consumerConfiguration(group: String, fetchWaitMaxMs: Int = 10) -> KafkaConsumerConfiguration {
        var configuration = KafkaConsumerConfiguration(bootstrapServers: bootstrapServers, groupId: group)
        configuration.clientId = "herald-\(group)"
        configuration.isolationLevel = .readCommitted
        configuration.enableAutoCommit = false
        configuration.enableAutoOffsetStore = false
        configuration.autoOffsetReset = .earliest
        configuration.sessionTimeoutMs = sessionTimeoutMs
        configuration.heartbeatIntervalMs = max(500, sessionTimeoutMs / 4)
        configuration.leaveGroupOnClose = leaveGroupOnClose
        configuration.fetchWaitMaxMs = fetchWaitMaxMs
        configuration.extra = kafkaExtra
        return configuration
    }

    /// The consumer a bulk lane reads noticed task partitions with: no group, a short fetch
    /// wait (the records are committed before the notice), little prefetch.
    func directReadConfiguration(lane: String) -> KafkaConsumerConfiguration {
        var configuration = KafkaConsumerConfiguration(bootstrapServers: bootstrapServers)
        configuration.clientId = "herald-\(lane)-direct"
        configuration.isolationLevel = .readCommitted
        configuration.fetchWaitMaxMs = 5
        configuration.queuedMinMessages = 1
        configuration.extra = kafkaExtra
        return configuration
    }

    /// The transactional id of a role's producer (and lane's, when it has several) in this
    /// process: the same for the life of `instanceId`.
    func transactionalId(role: String, lane: Int?) -> String {
        var id = "\(transactionalIdPrefix)-\(role)-\(instanceId)"
        if let lane { id += "-\(lane)" }
        return id
    }

    /// Every transactional id a worker with `roles` uses, but the scheduler's: those are per
    /// partition and pass to the partition's next owner.
    public func transactionalIds(roles: Set<WorkerRole>) -> [String] {
        var ids: [String] = []
        if roles.contains(.planner) { ids.append(transactionalId(role: "planner", lane: nil)) }
        if roles.contains(.fanout) {
            ids += (0..<max(0, expressLanes)).map { transactionalId(role: "fanout-\(TaskLane.express.rawValue)", lane: $0) }
            ids += (0..<max(0, bulkLanes)).map { transactionalId(role: "fanout-\(TaskLane.bulk.rawValue)", lane: $0) }
        }
        if roles.contains(.sender) { ids += (0..<max(1, sender.loops)).map { transactionalId(role: "sender", lane: $0) } }
        return ids
    }

    func transactionalProducerConfiguration(role: String, lane: Int?, forDeliveries: Bool) -> KafkaProducerConfiguration {
        let id = transactionalId(role: role, lane: lane)
        if forDeliveries {
            return deliveryProducerConfiguration(clientId: "herald-\(role)", transactionalId: id)
        }
        var configuration = KafkaProducerConfiguration(bootstrapServers: bootstrapServers)
        configuration.clientId = "herald-\(role)"
        configuration.transactionalId = id
        configuration.transactionTimeoutMs = transactionTimeoutMs
        // librdkafka requires it: a record may not outlive the transaction it belongs to.
        configuration.messageTimeoutMs = min(configuration.messageTimeoutMs, transactionTimeoutMs)
        configuration.lingerMs = 1
        configuration.extra = kafkaExtra
        return configuration
    }

    /// The bulk lanes' delivery producer: the hot path's throughput settings. Public so that
    /// the benchmark's broker ceiling writes with exactly the same ones; `transactionalId` nil
    /// gives the same producer without transactions. For a producer that writes one partition
    /// per transaction (`deliveryLingerMs(onePartitionPerTask:)`).
    public func deliveryProducerConfiguration(clientId: String, transactionalId: String?, onePartitionPerTask: Bool = true)
        -> KafkaProducerConfiguration
    {
        var configuration = KafkaProducerConfiguration(bootstrapServers: bootstrapServers)
        configuration.clientId = clientId
        if let transactionalId {
            configuration.transactionalId = transactionalId
            configuration.transactionTimeoutMs = transactionTimeoutMs
            configuration.messageTimeoutMs = min(configuration.messageTimeoutMs, transactionTimeoutMs)
        }
        // The lanes only `enqueue`, and a failed record fails the commit: reporting only
        // failures saves the poll thread a wake-up and a callback per record. Not for the
        // planner and express producers: a commit's flush waits for reports in 10 ms steps
        // unless a report wakes it, which would add up to 10 ms to a one-user delivery.
        configuration.reportsSuccessfulDeliveries = false
        configuration.lingerMs = deliveryLingerMs(onePartitionPerTask: onePartitionPerTask)
        configuration.compression = deliveryCompression
        configuration.batchSize = deliveryBatchSize
        configuration.queueBufferingMaxMessages = deliveryQueueMaxMessages
        configuration.queueBufferingMaxKbytes = deliveryQueueMaxKbytes
        configuration.batchNumMessages = 10_000
        configuration.extra = kafkaExtra
        return configuration
    }

    func plainProducerConfiguration(clientId: String) -> KafkaProducerConfiguration {
        var configuration = KafkaProducerConfiguration(bootstrapServers: bootstrapServers)
        configuration.clientId = clientId
        configuration.lingerMs = 1
        configuration.extra = kafkaExtra
        return configuration
    }
}
