import CRdKafka

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
        rd_kafka_destroy(handle)
        callbacks.deliveries?.failAll(
            KafkaError(
                code: .destroyed, message: "producer destroyed before the broker acknowledged the record", operation: "deliver message")
        )
        retainedCallbacks.release()
    }

    /// Serves queued callbacks (delivery reports, errors) for up to `timeoutMs`.
    @discardableResult
    func poll(timeoutMs: Int32) -> Int32 { rd_kafka_poll(handle, timeoutMs) }

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
