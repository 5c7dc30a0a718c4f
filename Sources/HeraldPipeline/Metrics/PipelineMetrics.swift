import Foundation
import HeraldKafka
import HeraldRedis
import Metrics

/// The pipeline's metrics, created once per worker (`WorkerContext.metrics`) and handed to each
/// role: looking a metric up in the factory for every record would cost more than the work it
/// counts. Names follow Prometheus conventions; the app installs the backend
/// (swift-prometheus) at start, so every instance reports to the same registry.
public final class PipelineMetrics: Sendable {

    private let lock = NSLock()
    nonisolated(unsafe) private var counters: [String: Counter] = [:]
    nonisolated(unsafe) private var gauges: [String: Gauge] = [:]

    /// `herald_publish_to_delivery_seconds`: from the event's `publishedAt` to `renderedAt`.
    /// Observed once per page of recipients (and so exactly for small audiences).
    public let publishToDelivery = Timer(label: "herald_publish_to_delivery_seconds", preferredDisplayUnit: .seconds)
    /// From an event's publish to the push service's acceptance of each of its deliveries
    /// (receipts `sent`): the reach objective's histogram.
    public let publishToSent = Timer(label: "herald_publish_to_sent_seconds", preferredDisplayUnit: .seconds)
    public let tasks = Counter(label: "herald_tasks_total")
    /// `herald_direct_task_reads_total`: tasks a bulk lane read at its planner's notice instead
    /// of through its group consumer's fetch (`HERALD_TASK_HANDOFF=direct`).
    public let directTaskReads = Counter(label: "herald_direct_task_reads_total")
    public let kafkaErrors = Counter(label: "herald_kafka_errors_total")
    public let redisErrors = Counter(label: "herald_redis_errors_total")
    /// `herald_schedule_releases_total`: events the scheduler released (a local-time part counts once).
    public let scheduleReleases = Counter(label: "herald_schedule_releases_total")
    /// `herald_schedule_release_lateness_seconds`: from a schedule's release time to the commit
    /// of its release, once per schedule released.
    public let scheduleLateness = Timer(label: "herald_schedule_release_lateness_seconds", preferredDisplayUnit: .seconds)
    /// `herald_scheduler_partitions`: partitions of `herald.scheduled` this worker owns and has read.
    public let schedulerPartitions = Gauge(label: "herald_scheduler_partitions")

    /// `herald_push_latency_seconds`: from a delivery's first request to its final answer.
    public let pushLatency = Timer(label: "herald_push_latency_seconds", preferredDisplayUnit: .seconds)
    /// `herald_push_in_flight`: requests to the push services waiting for their answer.
    public let pushInFlight = Gauge(label: "herald_push_in_flight")

    public init() {}

    /// `herald_push_receipts_total{platform,outcome}`: final receipts the sender committed.
    public func pushReceipts(_ platform: String, _ outcome: String) -> Counter {
        counter("herald_push_receipts_total", [("platform", platform), ("outcome", outcome)])
    }

    /// `herald_push_requests_total{platform}`: requests sent to the push services (every attempt).
    public func pushRequests(_ platform: String) -> Counter { counter("herald_push_requests_total", "platform", platform) }

    /// `herald_push_retries_total{platform,reason}`: attempts followed by another (reason: the
    /// service's, or `connection`, `timeout`).
    public func pushRetries(_ platform: String, _ reason: String) -> Counter {
        counter("herald_push_retries_total", [("platform", platform), ("reason", reason)])
    }

    /// `herald_registrations_removed_total{outcome}`: removed, kept, absent (after an
    /// unregistered answer).
    public func unregisteredRemovals(_ outcome: String) -> Counter {
        counter("herald_registrations_removed_total", "outcome", outcome)
    }

    /// `herald_events_total{outcome}`: planned, duplicate, expired, dead_letter, empty.
    public func events(_ outcome: String) -> Counter { counter("herald_events_total", "outcome", outcome) }

    /// `herald_deliveries_total{platform}`.
    public func deliveries(_ platform: String) -> Counter { counter("herald_deliveries_total", "platform", platform) }

    /// `herald_dead_letters_total{reason}` (the first validation issue's code).
    public func deadLetters(_ reason: String) -> Counter { counter("herald_dead_letters_total", "reason", reason) }

    /// `herald_skipped_total{reason}`: expired, no_native_payload, template_filtered,
    /// template_missing, unreadable_view.
    public func skipped(_ reason: String) -> Counter { counter("herald_skipped_total", "reason", reason) }

    /// `herald_consumer_lag{topic}`: records not yet committed by this worker's group.
    public func consumerLag(_ topic: String) -> Gauge {
        lock.withLock {
            if let gauge = gauges[topic] { return gauge }
            let gauge = Gauge(label: "herald_consumer_lag", dimensions: [("topic", topic)])
            gauges[topic] = gauge
            return gauge
        }
    }

    /// Counts an error of a Kafka or Redis call (anything else counts as neither).
    func countError(_ error: any Error) {
        if error is KafkaError { kafkaErrors.increment() } else if error is RedisError { redisErrors.increment() }
    }

    private func counter(_ label: String, _ dimension: String, _ value: String) -> Counter {
        counter(label, [(dimension, value)])
    }

    private func counter(_ label: String, _ dimensions: [(String, String)]) -> Counter {
        let key = ([label] + dimensions.map(\.1)).joined(separator: "\u{0}")
        return lock.withLock {
            if let counter = counters[key] { return counter }
            let counter = Counter(label: label, dimensions: dimensions)
            counters[key] = counter
            return counter
        }
    }
}
