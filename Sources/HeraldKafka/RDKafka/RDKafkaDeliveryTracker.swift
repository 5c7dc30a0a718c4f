import CRdKafka
import Synchronization

/// Matches librdkafka delivery reports to the records that asked for one.
///
/// Each awaited record carries a ticket (a non-zero integer passed as the message opaque);
/// ticket 0 marks a fire-and-forget record whose failures are only counted, so that
/// `flush()` can report them.
final class RDKafkaDeliveryTracker: Sendable {
    private struct State {
        var nextTicket: UInt = 1
        var waiting: [UInt: CheckedContinuation<KafkaDeliveryReport, any Error>] = [:]
        var failuresSinceFlush = 0
        var firstFailureSinceFlush: KafkaError?
        var totalFailures = 0
    }

    private let state = Mutex(State())
    /// Kept outside the lock: the fan-out enqueues hundreds of thousands of fire-and-forget
    /// records per second, and their successful reports need nothing else.
    private let delivered = Atomic<Int>(0)

    func register(_ continuation: CheckedContinuation<KafkaDeliveryReport, any Error>) -> UInt {
        state.withLock { state in
            let ticket = state.nextTicket
            state.nextTicket &+= 1
            if state.nextTicket == 0 { state.nextTicket = 1 }
            state.waiting[ticket] = continuation
            return ticket
        }
    }

    /// Takes back a ticket whose record never reached librdkafka's queue.
    func cancel(_ ticket: UInt) -> CheckedContinuation<KafkaDeliveryReport, any Error>? {
        state.withLock { $0.waiting.removeValue(forKey: ticket) }
    }

    /// Called from the delivery-report callback.
    func complete(_ message: UnsafePointer<rd_kafka_message_t>) {
        let ticket = UInt(bitPattern: message.pointee._private)
        if ticket == 0 && message.pointee.err == RD_KAFKA_RESP_ERR_NO_ERROR {
            // The hot path: a fire-and-forget record arrived. No topic name, no lock.
            delivered.add(1, ordering: .relaxed)
            return
        }
        let topic = message.pointee.rkt.map { String(cString: rd_kafka_topic_name($0)) } ?? "?"
        let result: Result<KafkaDeliveryReport, KafkaError>
        if message.pointee.err == RD_KAFKA_RESP_ERR_NO_ERROR {
            result = .success(KafkaDeliveryReport(topic: topic, partition: message.pointee.partition, offset: message.pointee.offset))
        } else {
            result = .failure(KafkaError(message.pointee.err, operation: "deliver message", topic: topic))
        }
        let continuation: CheckedContinuation<KafkaDeliveryReport, any Error>? = state.withLock { state in
            switch result {
            case .success: delivered.add(1, ordering: .relaxed)
            case .failure(let error):
                state.totalFailures += 1
                if ticket == 0 {
                    state.failuresSinceFlush += 1
                    if state.firstFailureSinceFlush == nil { state.firstFailureSinceFlush = error }
                }
            }
            return ticket == 0 ? nil : state.waiting.removeValue(forKey: ticket)
        }
        continuation?.resume(with: result.mapError { $0 })
    }

    /// Fire-and-forget failures since the last call, as one error (or nil when none).
    func takeFailures() -> KafkaError? {
        state.withLock { state in
            defer {
                state.failuresSinceFlush = 0
                state.firstFailureSinceFlush = nil
            }
            guard state.failuresSinceFlush > 0, var error = state.firstFailureSinceFlush else { return nil }
            error.message = "\(state.failuresSinceFlush) enqueued record(s) failed delivery since the last flush; first: \(error.message)"
            error.operation = "flush"
            return error
        }
    }

    var totalFailures: Int { state.withLock { $0.totalFailures } }
    var totalDelivered: Int { delivered.load(ordering: .relaxed) }

    /// Resumes every waiting sender with `error` (the handle is going away).
    func failAll(_ error: KafkaError) {
        let waiting = state.withLock { state in
            defer { state.waiting.removeAll() }
            return Array(state.waiting.values)
        }
        for continuation in waiting { continuation.resume(throwing: error) }
    }
}
