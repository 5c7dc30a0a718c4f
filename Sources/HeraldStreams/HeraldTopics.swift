/// The Kafka topics of the pipeline, with the partition counts `TopicProvisioner` creates.
///
/// Names are configurable so several deployments (or tests) can share one cluster; the
/// defaults are the contract names in docs/topics.md.
public struct HeraldTopics: Sendable, Hashable {
    /// Incoming notification events (key: event id).
    public var events: String = "herald.events"
    /// Events that could not be parsed or validated, with the original bytes and a reason.
    public var eventsDeadLetters: String = "herald.events.dlq"
    /// Fan-out tasks of wide events (broadcasts and wide expressions), chunks of slot ranges.
    public var tasks: String = "herald.tasks"
    /// Fan-out tasks of narrow events (a few slots), consumed by their own lane so a one-user
    /// notification never waits behind broadcast chunks.
    public var expressTasks: String = "herald.tasks.express"
    /// One record per (event, registration, template) (key: registration id).
    public var deliveries: String = "herald.deliveries"
    /// Status and progress per event (key: event id).
    public var status: String = "herald.status"
    /// Schedules waiting for their time and cancel requests (key: event id; compacted, a
    /// tombstone once nothing is pending): the system of record of the scheduler role.
    public var scheduled: String = "herald.scheduled"
    /// One final receipt per delivery pushed by the sender role (key: delivery id; compacted).
    public var receipts: String = "herald.receipts"
    /// The hubs of the deployment (compacted; key: the hub's name), their system of record.
    public var hubs: String = "herald.hubs"
    /// Readers' opens and dismissals of alerts, as their apps report them (compacted; key:
    /// `<event>/<device>/<action>`, so each device counts once).
    public var engagements: String = "herald.engagements"

    /// Partitions of `events`: planner parallelism.
    public var eventsPartitions: Int32 = 3
    public var deadLetterPartitions: Int32 = 1
    /// Partitions of `tasks`: the most fan-out lanes that can share one broadcast.
    public var tasksPartitions: Int32 = 12
    public var expressTasksPartitions: Int32 = 3
    /// Partitions of `deliveries`: consumer parallelism of the delivery senders downstream.
    /// The express partitions (`PipelineConfiguration.expressDeliveryPartitions`, 2) plus at
    /// least one per partition of `tasks`, so that no two bulk lanes share one.
    public var deliveriesPartitions: Int32 = 14
    public var statusPartitions: Int32 = 3
    public var scheduledPartitions: Int32 = 3
    public var receiptsPartitions: Int32 = 6
    public var engagementsPartitions: Int32 = 3
    /// 1 for a single broker; 3 in production.
    public var replicationFactor: Int16 = 1

    public init() {}

    /// Every topic with the same names prefixed by `prefix` and a dot (`test1.herald.events`),
    /// for tests and side-by-side deployments on one cluster.
    public static func prefixed(_ prefix: String) -> HeraldTopics {
        var topics = HeraldTopics()
        topics.events = prefix + "." + topics.events
        topics.eventsDeadLetters = prefix + "." + topics.eventsDeadLetters
        topics.tasks = prefix + "." + topics.tasks
        topics.expressTasks = prefix + "." + topics.expressTasks
        topics.deliveries = prefix + "." + topics.deliveries
        topics.status = prefix + "." + topics.status
        topics.scheduled = prefix + "." + topics.scheduled
        topics.receipts = prefix + "." + topics.receipts
        topics.hubs = prefix + "." + topics.hubs
        topics.engagements = prefix + "." + topics.engagements
        return topics
    }

    /// The partition of `scheduled` that holds `eventId`'s schedule: every writer (the planner,
    /// the scheduler, a cancel request) names it, so no client's partitioner decides. FNV-1a of
    /// the id's bytes modulo the partition count.
    public func scheduledPartition(of eventId: String) -> Int32 {
        var hash: UInt32 = 2_166_136_261
        for byte in eventId.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        return Int32(hash % UInt32(max(1, scheduledPartitions)))
    }

    /// Name and partition count of every topic, in data-flow order.
    public var all: [(name: String, partitions: Int32)] {
        [
            (events, eventsPartitions),
            (eventsDeadLetters, deadLetterPartitions),
            (tasks, tasksPartitions),
            (expressTasks, expressTasksPartitions),
            (deliveries, deliveriesPartitions),
            (status, statusPartitions),
            (scheduled, scheduledPartitions),
            (receipts, receiptsPartitions),
            (hubs, 1),
            (engagements, engagementsPartitions),
        ]
    }
}
