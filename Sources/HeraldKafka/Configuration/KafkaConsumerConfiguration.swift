/// Settings of a `KafkaConsumer`. Offsets are never committed behind the caller's back by
/// default: Herald stores or commits an offset only after the record's work is done.
public struct KafkaConsumerConfiguration: Sendable {
    /// Comma-separated `host:port` list used to discover the cluster.
    public var bootstrapServers: String
    public var clientId: String = "herald"
    /// The consumer group; required for `subscribe` and for committing offsets. Leave nil
    /// for a consumer that only reads `assign`ed partitions.
    public var groupId: String?
    /// A member silent this long is removed from the group. Tansu delays a group join by
    /// about half of this, so tests and local runs use about 6000.
    public var sessionTimeoutMs: Int = 45_000
    public var heartbeatIntervalMs: Int = 3_000
    /// A member that does not poll for this long leaves the group (its partitions move).
    public var maxPollIntervalMs: Int = 300_000
    public var autoOffsetReset: KafkaAutoOffsetReset = .earliest
    /// `readCommitted` hides records of open (and, on Apache Kafka, aborted) transactions.
    public var isolationLevel: KafkaIsolationLevel = .readCommitted
    /// When true, librdkafka commits the *stored* offsets periodically; combined with
    /// `enableAutoOffsetStore = false` that still means "only what `storeOffset` marked done".
    public var enableAutoCommit: Bool = false
    public var autoCommitIntervalMs: Int = 5_000
    /// When false, only `storeOffset` advances what `commitStored` and auto-commit write.
    public var enableAutoOffsetStore: Bool = false
    /// Default and upper bound for `pollBatch(maxMessages:)`. Herald-side setting.
    public var maxPollRecords: Int = 500
    public var partitionAssignmentStrategy: KafkaPartitionAssignmentStrategy = .rangeThenRoundRobin
    /// The broker answers a fetch once this many bytes are ready...
    public var fetchMinBytes: Int = 1
    /// ...or after this long, whichever comes first.
    public var fetchWaitMaxMs: Int = 100
    /// Upper bound of one fetch response.
    public var fetchMaxBytes: Int = 52_428_800
    /// Upper bound per partition in one fetch.
    public var maxPartitionFetchBytes: Int = 1_048_576
    /// Records librdkafka prefetches per partition.
    public var queuedMinMessages: Int = 100_000
    /// Whether `close` leaves the group (LeaveGroup), so the partitions move at once. When
    /// false the member just disconnects and the broker removes it after `sessionTimeoutMs`:
    /// Tansu 0.6, the embedded broker, keeps a leader that leaves while its group is
    /// re-forming as the leader for good, and then no later member is ever assigned anything.
    /// Herald-side setting (librdkafka's destroy flag).
    public var leaveGroupOnClose: Bool = true
    /// Any further librdkafka property; these override the typed settings above.
    public var extra: [String: String] = [:]

    public init(bootstrapServers: String = "127.0.0.1:9092", groupId: String? = nil) {
        self.bootstrapServers = bootstrapServers
        self.groupId = groupId
    }

    /// The `group.id` sent when `groupId` is nil (assign-only consumers).
    public static let assignOnlyGroupId = "herald-assign-only"

    /// The librdkafka properties these settings stand for (the only translation point).
    public func librdkafkaProperties() -> [String: String] {
        var properties: [String: String] = [
            "bootstrap.servers": bootstrapServers,
            "client.id": clientId,
            "session.timeout.ms": String(sessionTimeoutMs),
            "heartbeat.interval.ms": String(heartbeatIntervalMs),
            "max.poll.interval.ms": String(maxPollIntervalMs),
            "auto.offset.reset": autoOffsetReset.rawValue,
            "isolation.level": isolationLevel.rawValue,
            "enable.auto.commit": String(enableAutoCommit),
            "auto.commit.interval.ms": String(autoCommitIntervalMs),
            "enable.auto.offset.store": String(enableAutoOffsetStore),
            "partition.assignment.strategy": partitionAssignmentStrategy.rawValue,
            "fetch.min.bytes": String(fetchMinBytes),
            "fetch.wait.max.ms": String(fetchWaitMaxMs),
            "fetch.max.bytes": String(fetchMaxBytes),
            "max.partition.fetch.bytes": String(maxPartitionFetchBytes),
            "queued.min.messages": String(queuedMinMessages),
            "enable.partition.eof": "false",
        ]
        // librdkafka's consumer refuses even `assign` without a group id; a consumer that
        // only assigns never joins or commits, so a fixed placeholder is harmless.
        properties["group.id"] = groupId ?? Self.assignOnlyGroupId
        properties.merge(extra) { _, override in override }
        return properties
    }
}
