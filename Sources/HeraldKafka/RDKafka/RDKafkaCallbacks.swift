import CRdKafka
import Logging
import Synchronization

/// The Swift side of librdkafka's C callbacks, reached through the handle's opaque pointer.
/// Log callbacks come from librdkafka's internal threads; the others from whichever thread
/// polls (the producer's poll thread, the consumer's poll queue).
final class RDKafkaCallbacks: Sendable {
    let logger: Logger
    let deliveries: RDKafkaDeliveryTracker?
    let rebalanceHandler: (@Sendable (KafkaRebalanceEvent) -> Void)?
    /// Counts revocations and losses, so a batch poll can tell that partitions moved under it.
    let revocationCount = Atomic<Int>(0)

    init(
        logger: Logger,
        deliveries: RDKafkaDeliveryTracker? = nil,
        rebalanceHandler: (@Sendable (KafkaRebalanceEvent) -> Void)? = nil
    ) {
        self.logger = logger
        self.deliveries = deliveries
        self.rebalanceHandler = rebalanceHandler
    }

    private static func from(_ opaque: UnsafeMutableRawPointer?) -> RDKafkaCallbacks? {
        opaque.map { Unmanaged<RDKafkaCallbacks>.fromOpaque($0).takeUnretainedValue() }
    }

    static func install(on configuration: OpaquePointer, kind: RDKafkaClient.Kind) {
        rd_kafka_conf_set_log_cb(configuration) { handle, level, facility, text in
            guard let handle, let callbacks = RDKafkaCallbacks.from(rd_kafka_opaque(handle)) else { return }
            callbacks.log(level: level, facility: facility, text: text)
        }
        rd_kafka_conf_set_error_cb(configuration) { handle, code, reason, opaque in
            guard let handle, let callbacks = RDKafkaCallbacks.from(opaque) else { return }
            callbacks.reportError(handle: handle, code: rd_kafka_resp_err_t(rawValue: code), reason: reason)
        }
        // Only emitted when `statistics.interval.ms` is set (e.g. in the Kafka config file).
        rd_kafka_conf_set_stats_cb(configuration) { handle, json, length, opaque in
            guard let json, let callbacks = RDKafkaCallbacks.from(opaque) else { return 0 }
            callbacks.statistics(UnsafeRawBufferPointer(start: json, count: length))
            return 0  // librdkafka frees the JSON
        }
        switch kind {
        case .producer:
            rd_kafka_conf_set_dr_msg_cb(configuration) { _, message, opaque in
                guard let message, let callbacks = RDKafkaCallbacks.from(opaque) else { return }
                callbacks.deliveries?.complete(message)
            }
        case .consumer:
            rd_kafka_conf_set_rebalance_cb(configuration) { handle, code, partitions, opaque in
                guard let handle, let callbacks = RDKafkaCallbacks.from(opaque) else { return }
                callbacks.rebalance(handle: handle, code: code, partitions: partitions)
            }
        }
    }

    private func log(level: Int32, facility: UnsafePointer<CChar>?, text: UnsafePointer<CChar>?) {
        // librdkafka uses syslog levels: 0 emergency ... 7 debug.
        let swiftLevel: Logger.Level =
            switch level {
            case ...2: .critical
            case 3: .error
            case 4: .warning
            case 5: .notice
            case 6: .info
            default: .debug
            }
        let message = text.map { String(cString: $0) } ?? ""
        let facilityName = facility.map { String(cString: $0) } ?? "?"
        logger.log(level: swiftLevel, "\(message)", metadata: ["librdkafka.facility": "\(facilityName)"])
    }

    /// librdkafka's statistics document (per broker: requests, round trips, wake-ups, queue
    /// latencies; per partition: batches and messages), logged whole on one line for
    /// operators and `herald bench` diagnostics (docs/operations.md).
    private func statistics(_ json: UnsafeRawBufferPointer) {
        logger.info("librdkafka statistics", metadata: ["librdkafka.statistics": "\(String(decoding: json, as: UTF8.self))"])
    }

    private func reportError(handle: OpaquePointer, code: rd_kafka_resp_err_t, reason: UnsafePointer<CChar>?) {
        let text = reason.map { String(cString: $0) } ?? String(cString: rd_kafka_err2str(code))
        if code == RD_KAFKA_RESP_ERR__FATAL {
            logger.critical("librdkafka fatal error, the client must be recreated", metadata: ["error": "\(text)"])
        } else if code == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN {
            logger.error("all Kafka brokers are down", metadata: ["error": "\(text)"])
        } else {
            // Most error events are transient (a broker connection dropped) and librdkafka
            // recovers by itself, so they are reported, not thrown.
            logger.warning("librdkafka error", metadata: ["code": "\(String(cString: rd_kafka_err2name(code)))", "error": "\(text)"])
        }
    }

    private func rebalance(
        handle: OpaquePointer,
        code: rd_kafka_resp_err_t,
        partitions: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?
    ) {
        let changed = partitions.map { RDKafkaTopicPartitionList.partitions(of: $0) } ?? []
        let cooperative = rd_kafka_rebalance_protocol(handle).map { String(cString: $0) } == "COOPERATIVE"
        switch code {
        case RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS:
            if cooperative {
                if let error = rd_kafka_incremental_assign(handle, partitions) {
                    logger.error(
                        "rebalance failed", metadata: ["error": "\(KafkaError(consuming: error, operation: "incremental assign"))"])
                }
            } else {
                let result = rd_kafka_assign(handle, partitions)
                if result != RD_KAFKA_RESP_ERR_NO_ERROR {
                    logger.error("rebalance failed", metadata: ["error": "\(KafkaError(result, operation: "assign"))"])
                }
            }
            logger.info("partitions assigned", metadata: ["partitions": "\(changed.map(\.description).joined(separator: ", "))"])
            rebalanceHandler?(.assigned(changed))
        case RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS:
            let lost = rd_kafka_assignment_lost(handle) != 0
            revocationCount.add(1, ordering: .releasing)
            logger.info(
                lost ? "partitions lost" : "partitions revoked",
                metadata: ["partitions": "\(changed.map(\.description).joined(separator: ", "))"])
            // The owner hears first, while the partitions are still assigned, so it can drop
            // in-flight work (and, if revoked rather than lost, still commit finished work).
            rebalanceHandler?(lost ? .lost(changed) : .revoked(changed))
            if cooperative {
                if let error = rd_kafka_incremental_unassign(handle, partitions) {
                    logger.error(
                        "rebalance failed", metadata: ["error": "\(KafkaError(consuming: error, operation: "incremental unassign"))"])
                }
            } else {
                rd_kafka_assign(handle, nil)
            }
        default:
            logger.error("rebalance failed; dropping the assignment", metadata: ["error": "\(KafkaError(code, operation: "rebalance"))"])
            revocationCount.add(1, ordering: .releasing)
            rebalanceHandler?(.lost(changed))
            rd_kafka_assign(handle, nil)
        }
    }
}
