import HeraldDomain

/// Settings of the registration system of record (Kafka) and index (Redis). Every field has
/// a documented default; the application maps flags and environment variables onto them.
public struct RegistryConfiguration: Sendable {
    /// The compacted topic holding every registration and installation. Default `herald.registrations`.
    public var registrationsTopic: String = "herald.registrations"
    /// Partitions when Herald creates the topic. Default 12: enough indexer members to share
    /// the load, few enough that a reindex opens them all quickly.
    public var topicPartitions: Int = 12
    /// Replication factor when Herald creates the topic. Default 1 (a local broker); use 3 in production.
    public var topicReplicationFactor: Int = 1
    /// Slots of the Redis layout (`HERALD_SLOTS`). Default 256. Fixed per deployment.
    public var slotCount: Int = SlotLayout.defaultSlotCount
    /// Prefix of every Redis key (`HERALD_REDIS_PREFIX`). Default `herald`.
    public var redisPrefix: String = "herald"
    /// The secret that signs issued registration ids (`HERALD_REGISTRATION_ID_SECRET`).
    /// Keep it stable: ids issued under another secret count as never issued (410).
    public var registrationIdSecret: String = "herald-development-secret"
    /// Limits applied when registrations and installations are validated (tags per
    /// registration default 1,000, template body 64 KB).
    public var limits: RegistrationLimits = .default
    /// Upper bound of `limit` in list queries. Default 1,000.
    public var maximumPageSize: Int = 1_000
    /// Seconds a write waits for Kafka's acknowledgement before failing with `.timeout`. Default 10.
    public var kafkaAckTimeout: Double = 10
    /// Seconds one registration or installation write, and one indexer batch, waits at most
    /// while a breaking alert fans out (`AlertYield`). Default 5; 0: writes never wait.
    public var alertYieldSeconds: Double = 5
    /// Consumer group of the indexer role. Default `herald-indexer`.
    public var indexerGroup: String = "herald-indexer"
    /// Records per indexer batch (one poll, one Redis pipeline, one commit). Default 1,000.
    public var indexerBatchSize: Int = 1_000
    /// Seconds between expiry sweeps of the indexer. Default 30.
    public var sweepInterval: Double = 30
    /// Registrations removed per slot in one sweep script call. Default 1,000.
    public var sweepBatchPerSlot: Int = 1_000

    public init() {}

    /// The slot layout these settings describe.
    public var layout: SlotLayout { SlotLayout(slotCount: slotCount, prefix: redisPrefix) }
}
