/// Settings of a `KafkaProducer`. Defaults favour safety (idempotent, `acks=all`) with a
/// short linger so batches form under load without delaying a lone breaking-news event.
public struct KafkaProducerConfiguration: Sendable {
    /// Comma-separated `host:port` list used to discover the cluster.
    public var bootstrapServers: String
    /// Shown in broker logs and quotas.
    public var clientId: String = "herald"
    /// Exactly-once per partition: no duplicates from internal retries, order kept.
    public var enableIdempotence: Bool = true
    public var acks: KafkaAcks = .all
    /// How long to wait for more records before sending a batch.
    public var lingerMs: Int = 5
    /// Maximum bytes in one batch (librdkafka default 1 MB).
    public var batchSize: Int = 1_000_000
    /// Largest record accepted (`message.max.bytes`); `enqueue` refuses a larger one at once
    /// with a `KafkaError` whose `isRecordTooLarge` is true. Herald keeps every record below this (RecordSizes in the domain).
    public var messageMaxBytes: Int = 1_000_000
    /// Maximum records in one batch.
    public var batchNumMessages: Int = 10_000
    public var compression: KafkaCompression = .none
    /// Local queue limit in records; a full queue makes `enqueue` wait for deliveries.
    public var queueBufferingMaxMessages: Int = 100_000
    /// Local queue limit in KiB.
    public var queueBufferingMaxKbytes: Int = 1_048_576
    /// How long a record may wait for delivery (retries included) before it fails.
    public var messageTimeoutMs: Int = 300_000
    /// Set to make the producer transactional (implies idempotence). Must be stable per
    /// logical producer (for example per worker slot) so a restart fences the old instance.
    public var transactionalId: String? = nil
    /// How long the broker lets a transaction stay open before aborting it.
    public var transactionTimeoutMs: Int = 60_000
    /// How long `enqueue` keeps retrying while the local queue is full before it throws
    /// `queueFull`. Herald-side setting, not a librdkafka key.
    public var queueFullRetryTimeoutMs: Int = 30_000
    /// False sets librdkafka's `delivery.report.only.error`: successful records are freed by
    /// the broker thread without a report, which saves the poll thread a wake-up, a callback
    /// and a free per record. Failures are still reported (and thrown by `flush`), but `send`,
    /// which awaits a success report, is refused. For producers that only `enqueue`, such as
    /// transactional ones, whose commit fails when any of their records failed.
    public var reportsSuccessfulDeliveries: Bool = true
    /// Any further librdkafka property (for example `security.protocol`, `debug`); these
    /// override the typed settings above.
    public var extra: [String: String] = [:]

    public init(bootstrapServers: String = "127.0.0.1:9092") {
        self.bootstrapServers = bootstrapServers
    }

    /// The librdkafka properties these settings stand for (the only translation point).
    public func librdkafkaProperties() -> [String: String] {
        var properties: [String: String] = [
            "bootstrap.servers": bootstrapServers,
            "client.id": clientId,
            "enable.idempotence": String(enableIdempotence || transactionalId != nil),
            "acks": acks.rawValue,
            "linger.ms": String(lingerMs),
            "batch.size": String(batchSize),
            "batch.num.messages": String(batchNumMessages),
            "message.max.bytes": String(messageMaxBytes),
            "compression.type": compression.rawValue,
            "queue.buffering.max.messages": String(queueBufferingMaxMessages),
            "queue.buffering.max.kbytes": String(queueBufferingMaxKbytes),
            "message.timeout.ms": String(messageTimeoutMs),
            "delivery.report.only.error": String(!reportsSuccessfulDeliveries),
        ]
        if let transactionalId {
            properties["transactional.id"] = transactionalId
            properties["transaction.timeout.ms"] = String(transactionTimeoutMs)
        }
        properties.merge(extra) { _, override in override }
        return properties
    }
}
