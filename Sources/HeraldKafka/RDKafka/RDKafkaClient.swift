import CRdKafka
import Foundation
import Synchronization

/// Owns one `rd_kafka_t` and the callback context its C callbacks reach through the opaque
/// pointer. The public clients (`KafkaProducer`, `KafkaConsumer`, `KafkaAdmin`) each hold one.
///
/// `@unchecked Sendable`: librdkafka handles are thread-safe; the Swift state reachable from
/// here is immutable or guarded.
final class RDKafkaClient: @unchecked Sendable {
    enum Kind {
        case producer
        case consumer
    }

    let handle: OpaquePointer
    let kind: Kind
    let callbacks: RDKafkaCallbacks
    // Released only after rd_kafka_destroy returns: callbacks can fire until then.
    private let retainedCallbacks: Unmanaged<RDKafkaCallbacks>
    /// Set by a consumer that disconnects without leaving its group (`leaveGroupOnClose`).
    let skipsConsumerCloseOnDestroy = Atomic<Bool>(false)

    init(kind: Kind, properties: [String: String], callbacks: RDKafkaCallbacks) throws {
        let operation = kind == .producer ? "create producer" : "create consumer"
        guard let configuration = rd_kafka_conf_new() else {
            throw KafkaError(code: .invalidArgument, message: "rd_kafka_conf_new returned NULL", operation: operation)
        }
        var errorText = [CChar](repeating: 0, count: 512)
        for (key, value) in properties.sorted(by: { $0.key < $1.key }) {
            let result = errorText.withUnsafeMutableBufferPointer {
                rd_kafka_conf_set(configuration, key, value, $0.baseAddress, $0.count)
            }
            guard result == RD_KAFKA_CONF_OK else {
                rd_kafka_conf_destroy(configuration)
                let shown = key.contains("password") || key.contains("secret") ? "***" : value
                throw KafkaError(
                    code: .invalidConfiguration,
                    message: "\(key)=\(shown) rejected: \(errorText.nulTerminatedText)",
                    operation: operation
                )
            }
        }
        RDKafkaCallbacks.install(on: configuration, kind: kind)
        let retained = Unmanaged.passRetained(callbacks)
        rd_kafka_conf_set_opaque(configuration, retained.toOpaque())

        let created = errorText.withUnsafeMutableBufferPointer {
            rd_kafka_new(kind == .producer ? RD_KAFKA_PRODUCER : RD_KAFKA_CONSUMER, configuration, $0.baseAddress, $0.count)
        }
        guard let created else {
            // On failure the configuration still belongs to us.
            rd_kafka_conf_destroy(configuration)
            retained.release()
            throw KafkaError(code: .invalidArgument, message: errorText.nulTerminatedText, operation: operation)
        }
        handle = created
        self.kind = kind
        self.callbacks = callbacks
        retainedCallbacks = retained
    }

    deinit {
        if skipsConsumerCloseOnDestroy.load(ordering: .acquiring) {
            rd_kafka_destroy_flags(handle, Int32(RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE))
        } else {
            rd_kafka_destroy(handle)
        }
        callbacks.deliveries?.failAll(
            KafkaError(
                code: .destroyed, message: "producer destroyed before the broker acknowledged the record", operation: "deliver message")
        )
        retainedCallbacks.release()
    }

    /// Serves queued callbacks (delivery reports, errors) for up to `timeoutMs`.
    @discardableResult
    func poll(timeoutMs: Int32) -> Int32 { rd_kafka_poll(handle, timeoutMs) }

    /// Ends a `poll` blocked on the main queue now, from another thread (or the next one, if
    /// none is blocked).
    func yieldPoll() {
        guard let queue = rd_kafka_queue_get_main(handle) else { return }
        rd_kafka_queue_yield(queue)
        rd_kafka_queue_destroy(queue)
    }

    /// Records produced but not yet acknowledged (or whose report was not yet served).
    var outstandingCount: Int { Int(rd_kafka_outq_len(handle)) }

    /// The instance's fatal error, if one was raised (idempotent or transactional producer).
    func fatalError(operation: String) -> KafkaError? {
        var text = [CChar](repeating: 0, count: 512)
        let code = text.withUnsafeMutableBufferPointer { rd_kafka_fatal_error(handle, $0.baseAddress, $0.count) }
        guard code != RD_KAFKA_RESP_ERR_NO_ERROR else { return nil }
        return KafkaError(code: .init(code), message: text.nulTerminatedText, operation: operation, isFatal: true)
    }
}

extension [CChar] {
    /// The NUL-terminated text librdkafka wrote into an error buffer.
    var nulTerminatedText: String {
        String(decoding: prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

// Every transactional call blocks (it waits for the transaction coordinator) and returns an
// rd_kafka_error_t that carries librdkafka's retriable / abortable / fatal classification.
extension RDKafkaClient {
    func initTransactions(timeoutMs: Int32) throws {
        try KafkaError.check(rd_kafka_init_transactions(handle, timeoutMs), operation: "init transactions")
    }

    func beginTransaction() throws {
        try KafkaError.check(rd_kafka_begin_transaction(handle), operation: "begin transaction")
    }

    func sendOffsetsToTransaction(
        _ offsets: [KafkaTopicPartitionOffset],
        groupMetadata: KafkaConsumerGroupMetadata,
        timeoutMs: Int32
    ) throws {
        let operation = "send offsets to transaction"
        var metadata: OpaquePointer?
        let readError = groupMetadata.serialized.withUnsafeBytes {
            rd_kafka_consumer_group_metadata_read(&metadata, $0.baseAddress, $0.count)
        }
        try KafkaError.check(readError, operation: operation)
        guard let metadata else {
            throw KafkaError(code: .invalidArgument, message: "unreadable consumer group metadata", operation: operation)
        }
        defer { rd_kafka_consumer_group_metadata_destroy(metadata) }
        let list = RDKafkaTopicPartitionList(offsets)
        try KafkaError.check(
            rd_kafka_send_offsets_to_transaction(handle, list.pointer, metadata, timeoutMs),
            operation: operation
        )
    }

    func commitTransaction(timeoutMs: Int32) throws {
        try KafkaError.check(rd_kafka_commit_transaction(handle, timeoutMs), operation: "commit transaction")
    }

    func abortTransaction(timeoutMs: Int32) throws {
        try KafkaError.check(rd_kafka_abort_transaction(handle, timeoutMs), operation: "abort transaction")
    }
}

extension RDKafkaClient {
    /// The bootstrap servers of the mock cluster this client created (librdkafka's
    /// `test.mock.num.brokers`), nil for a client of a real cluster.
    var mockClusterBootstraps: String? {
        guard let cluster = rd_kafka_handle_mock_cluster(handle), let text = rd_kafka_mock_cluster_bootstraps(cluster) else {
            return nil
        }
        return String(cString: text)
    }
}

extension KafkaProducer {
    /// With `extra["test.mock.num.brokers"]` set, librdkafka starts an in-process mock cluster
    /// for this producer: its address, for other clients of the same process or of others.
    public var mockClusterBootstraps: String? { client.mockClusterBootstraps }
}

/// A dedicated thread that serves a client's callbacks (delivery reports, errors) by calling
/// `rd_kafka_poll` in a loop. It is a plain thread because the call blocks, and blocking a
/// thread of Swift's cooperative pool would starve unrelated tasks.
final class RDKafkaPollThread: Sendable {
    private let stopRequested = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    private let client: RDKafkaClient

    /// `intervalMs` bounds nothing but an idle client's wake-ups: a callback's event ends a
    /// poll at once, and so does `stop()`.
    init(client: RDKafkaClient, name: String, intervalMs: Int32 = 1_000) {
        self.client = client
        let thread = Thread { [self] in
            while !self.stopRequested.load(ordering: .acquiring) {
                client.poll(timeoutMs: intervalMs)
            }
            self.finished.signal()
        }
        thread.name = name
        thread.start()
    }

    /// Stops the loop and waits for the thread to leave it: the poll it is in ends at once.
    func stop() {
        let (exchanged, _) = stopRequested.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing)
        guard exchanged else { return }
        client.yieldPoll()
        finished.wait()
    }
}
