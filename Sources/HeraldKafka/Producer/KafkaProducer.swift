import CRdKafka
import Dispatch
import struct Foundation.Date
import Logging
import Synchronization

/// Produces records to Kafka through librdkafka.
///
/// Two paths: `send` awaits the broker's acknowledgement of one record (for callers that must
/// know Kafka has it, such as the HTTP API); `enqueue` only queues the record and leaves
/// failures to be reported by the next `flush` (for the fan-out hot path). A dedicated poll
/// thread serves delivery reports; call `shutdown()` to flush and stop it.
public final class KafkaProducer: Sendable {
    public let configuration: KafkaProducerConfiguration
    let client: RDKafkaClient
    let blockingQueue: DispatchQueue
    private let deliveries: RDKafkaDeliveryTracker
    private let pollThread: RDKafkaPollThread
    private let topics = Mutex<[String: KafkaProducerTopic]>([:])
    private let abandoned = Atomic<Bool>(false)
    private let logger: Logger

    public init(configuration: KafkaProducerConfiguration, logger: Logger = Logger(label: "herald.kafka.producer")) throws {
        self.configuration = configuration
        self.logger = logger
        let deliveries = RDKafkaDeliveryTracker()
        self.deliveries = deliveries
        client = try RDKafkaClient(
            kind: .producer,
            properties: configuration.librdkafkaProperties(),
            callbacks: RDKafkaCallbacks(logger: logger, deliveries: deliveries)
        )
        blockingQueue = blockingCallQueue("herald.kafka.producer.blocking")
        pollThread = RDKafkaPollThread(client: client, name: "herald.kafka.producer.poll")
    }

    deinit { pollThread.stop() }

    /// Produces one record and waits for the broker to acknowledge it.
    @discardableResult
    public func send(_ message: KafkaOutgoingMessage) async throws -> KafkaDeliveryReport {
        guard configuration.reportsSuccessfulDeliveries else {
            throw KafkaError(
                code: .invalidArgument,
                message:
                    "this producer does not report successful deliveries (reportsSuccessfulDeliveries is false); use enqueue and flush",
                operation: "send", topic: message.topic
            )
        }
        return try await withCheckedThrowingContinuation { continuation in
            let ticket = deliveries.register(continuation)
            do {
                try enqueueRetryingWhileFull(message, ticket: ticket)
            } catch {
                deliveries.cancel(ticket)?.resume(throwing: error)
            }
        }
    }

    /// Queues one record without waiting for its acknowledgement. When librdkafka's local
    /// queue is full this waits (serving delivery reports) until there is room, for at most
    /// `queueFullRetryTimeoutMs`. Delivery failures surface in the next `flush()`.
    public func enqueue(_ message: KafkaOutgoingMessage) throws {
        try enqueueRetryingWhileFull(message, ticket: 0)
    }

    /// `enqueue` for callers that already hold the bytes elsewhere (a buffer, `Data`): the
    /// pointers only need to be valid during the call, librdkafka copies them.
    public func enqueue(
        topic: String,
        partition: Int32? = nil,
        key: UnsafeRawBufferPointer?,
        value: UnsafeRawBufferPointer?,
        headers: [KafkaHeader] = [],
        timestamp: Date? = nil
    ) throws {
        try retryingWhileFull {
            client.produce(topic: topic, partition: partition, key: key, value: value, headers: headers, timestamp: timestamp, ticket: 0)
        }
    }

    /// The handle of `name` for `enqueue(to:...)`, opened once per producer and reused.
    public func topic(_ name: String) throws -> KafkaProducerTopic {
        try topics.withLock { topics in
            if let topic = topics[name] { return topic }
            let topic = try KafkaProducerTopic(name: name, client: client)
            topics[name] = topic
            return topic
        }
    }

    /// `enqueue` for the hot path: a topic handle from `topic(_:)` instead of a name, no
    /// headers, and the record timestamp in milliseconds since 1970 (nil: now). The
    /// pointers only need to be valid during the call, librdkafka copies them.
    public func enqueue(
        to topic: KafkaProducerTopic,
        partition: Int32? = nil,
        key: UnsafeRawBufferPointer?,
        value: UnsafeRawBufferPointer?,
        timestampMs: Int64? = nil
    ) throws {
        guard topic.client === client else {
            throw KafkaError(
                code: .invalidArgument, message: "the topic handle belongs to another producer", operation: "produce",
                topic: topic.name
            )
        }
        try retryingWhileFull {
            client.produce(topic: topic, partition: partition, key: key, value: value, timestampMs: timestampMs)
        }
    }

    private func enqueueRetryingWhileFull(_ message: KafkaOutgoingMessage, ticket: UInt) throws {
        try retryingWhileFull {
            withOptionalBytes(message.key) { key in
                withOptionalBytes(message.value) { value in
                    client.produce(
                        topic: message.topic,
                        partition: message.partition,
                        key: key,
                        value: value,
                        headers: message.headers,
                        timestamp: message.timestamp,
                        ticket: ticket
                    )
                }
            }
        }
    }

    private func retryingWhileFull(_ attempt: () -> KafkaError?) throws {
        var deadline: ContinuousClock.Instant?
        while let error = attempt() {
            guard error.code == .queueFull else { throw error }
            let now = ContinuousClock.now
            let limit = deadline ?? now.advanced(by: .milliseconds(configuration.queueFullRetryTimeoutMs))
            deadline = limit
            guard now < limit else { throw error }
            // Serving delivery reports here frees queue space soonest; a producer that reports
            // only failures gets none, so the wait is short: space frees as the broker answers.
            client.poll(timeoutMs: 1)
        }
    }

    /// Waits until every queued record is acknowledged or failed, then throws if any record
    /// from `enqueue` failed since the previous flush.
    ///
    /// It flushes in 1 ms steps (see `RDKafkaClient.flush`), so it returns within about a
    /// millisecond of the last acknowledgement: this producer's poll thread serves the delivery
    /// reports, so `rd_kafka_flush`'s own waits rarely see one and would each last 10 ms.
    public func flush(timeout: Duration = .seconds(30)) async throws {
        let client = client
        try await runBlocking(on: blockingQueue, deadline: timeout + blockingCallGrace, operation: "flush", onExpiry: abandon) {
            try client.flush(timeoutMs: timeout.rdKafkaMilliseconds)
        }
        if let failure = deliveries.takeFailures() { throw failure }
    }

    /// Flushes (best effort, logging failures) and stops the poll thread. Call once when done.
    /// An abandoned producer (a blocking call passed its deadline) is not flushed: its blocking
    /// queue is stuck behind that call, so the flush would wait for it.
    public func shutdown(flushTimeout: Duration = .seconds(30)) async {
        if !isAbandoned {
            do {
                try await flush(timeout: flushTimeout)
            } catch {
                logger.error("producer shutdown failed", metadata: ["error": "\(error)"])
            }
        }
        pollThread.stop()
    }

    /// True once a blocking call passed Herald's deadline: the client is left to itself (its
    /// memory is kept, not freed under a thread still inside librdkafka) and must be replaced.
    public var isAbandoned: Bool { abandoned.load(ordering: .acquiring) }

    @Sendable func abandon() {
        abandoned.store(true, ordering: .releasing)
        logger.error("a blocking librdkafka call passed its deadline; this producer is abandoned and will be replaced")
    }

    /// Records queued locally or in flight (not yet acknowledged).
    public var outstandingCount: Int { client.outstandingCount }

    /// Records that failed delivery since this producer started (both paths).
    public var deliveryFailureCount: Int { deliveries.totalFailures }

    /// Records acknowledged since this producer started.
    public var deliveredCount: Int { deliveries.totalDelivered }
}

private func withOptionalBytes<Result>(_ bytes: [UInt8]?, _ body: (UnsafeRawBufferPointer?) -> Result) -> Result {
    guard let bytes else { return body(nil) }
    return bytes.withUnsafeBytes { body($0) }
}

/// One topic of one `KafkaProducer`, resolved once: records enqueued with it skip
/// librdkafka's lookup of the topic by name (a lock and string compares per record), which is
/// what a hot path writing millions of records to one topic wants. Get it from
/// `KafkaProducer.topic(_:)`; it keeps its producer's librdkafka instance alive.
///
/// `@unchecked Sendable`: librdkafka topic handles are thread-safe.
public final class KafkaProducerTopic: @unchecked Sendable {
    public let name: String
    let handle: OpaquePointer
    let client: RDKafkaClient

    init(name: String, client: RDKafkaClient) throws {
        guard let handle = rd_kafka_topic_new(client.handle, name, nil) else {
            let code = rd_kafka_last_error()
            throw KafkaError(
                code: .init(code), message: String(cString: rd_kafka_err2str(code)), operation: "open topic", topic: name
            )
        }
        self.name = name
        self.handle = handle
        self.client = client
    }

    deinit { rd_kafka_topic_destroy(handle) }
}
