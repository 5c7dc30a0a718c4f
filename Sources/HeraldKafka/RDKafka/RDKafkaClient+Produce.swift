import CRdKafka
import struct Foundation.Date

// A non-NULL address for empty keys, values and header values: librdkafka treats a NULL
// pointer as a null field (a tombstone for values), and an empty field must stay empty.
// With length 0 it is never read.
private nonisolated(unsafe) let emptyBytes = UnsafeMutableRawPointer.allocate(byteCount: 1, alignment: 1)

extension rd_kafka_vu_t {
    /// Points a key or value field at `bytes` (an empty buffer stays an empty field, not null).
    @inline(__always)
    fileprivate mutating func setBytes(_ bytes: UnsafeRawBufferPointer) {
        u.mem.ptr = UnsafeMutableRawPointer(mutating: bytes.baseAddress) ?? emptyBytes
        u.mem.size = bytes.count
    }
}

extension RDKafkaClient {
    /// Hands one record to librdkafka's queue, which copies the bytes (`RD_KAFKA_MSG_F_COPY`),
    /// so the buffers only need to live for the duration of this call.
    func produce(
        topic: String,
        partition: Int32?,
        key: UnsafeRawBufferPointer?,
        value: UnsafeRawBufferPointer?,
        headers: [KafkaHeader],
        timestamp: Date?,
        ticket: UInt
    ) -> KafkaError? {
        topic.withCString { topicName in
            var fields: [rd_kafka_vu_t] = []
            fields.reserveCapacity(7 + headers.count)
            func field(_ type: rd_kafka_vtype_t, _ fill: (inout rd_kafka_vu_t) -> Void) {
                var entry = rd_kafka_vu_t()
                entry.vtype = type
                fill(&entry)
                fields.append(entry)
            }
            field(RD_KAFKA_VTYPE_TOPIC) { $0.u.cstr = topicName }
            if let partition { field(RD_KAFKA_VTYPE_PARTITION) { $0.u.i32 = partition } }
            if let key { field(RD_KAFKA_VTYPE_KEY) { $0.setBytes(key) } }
            if let value { field(RD_KAFKA_VTYPE_VALUE) { $0.setBytes(value) } }
            field(RD_KAFKA_VTYPE_MSGFLAGS) { $0.u.i = RD_KAFKA_MSG_F_COPY }
            field(RD_KAFKA_VTYPE_OPAQUE) { $0.u.ptr = UnsafeMutableRawPointer(bitPattern: ticket) }
            if let timestamp {
                field(RD_KAFKA_VTYPE_TIMESTAMP) { $0.u.i64 = Int64((timestamp.timeIntervalSince1970 * 1000).rounded()) }
            }
            return withHeaderFields(headers[...], appendingTo: fields) { allFields in
                guard let error = rd_kafka_produceva(handle, allFields, allFields.count) else { return nil }
                return KafkaError(consuming: error, operation: "produce", topic: topic)
            }
        }
    }

    /// The hot path's `produce`: a resolved topic, no headers, and the field list on the
    /// stack, so the only allocation per record is librdkafka's own copy of it.
    func produce(
        topic: KafkaProducerTopic,
        partition: Int32?,
        key: UnsafeRawBufferPointer?,
        value: UnsafeRawBufferPointer?,
        timestampMs: Int64?
    ) -> KafkaError? {
        withUnsafeTemporaryAllocation(of: rd_kafka_vu_t.self, capacity: 6) { fields in
            var count = 0
            func field(_ type: rd_kafka_vtype_t, _ fill: (inout rd_kafka_vu_t) -> Void) {
                var entry = rd_kafka_vu_t()
                entry.vtype = type
                fill(&entry)
                fields.initializeElement(at: count, to: entry)
                count += 1
            }
            field(RD_KAFKA_VTYPE_RKT) { $0.u.rkt = topic.handle }
            if let partition { field(RD_KAFKA_VTYPE_PARTITION) { $0.u.i32 = partition } }
            if let key { field(RD_KAFKA_VTYPE_KEY) { $0.setBytes(key) } }
            if let value { field(RD_KAFKA_VTYPE_VALUE) { $0.setBytes(value) } }
            field(RD_KAFKA_VTYPE_MSGFLAGS) { $0.u.i = RD_KAFKA_MSG_F_COPY }
            if let timestampMs { field(RD_KAFKA_VTYPE_TIMESTAMP) { $0.u.i64 = timestampMs } }
            defer { fields.baseAddress!.deinitialize(count: count) }
            guard let error = rd_kafka_produceva(handle, fields.baseAddress, count) else { return nil }
            return KafkaError(consuming: error, operation: "produce", topic: topic.name)
        }
    }

    /// Adds one `RD_KAFKA_VTYPE_HEADER` field per header while keeping each header's name and
    /// bytes pinned until `body` returns (librdkafka copies them).
    private func withHeaderFields(
        _ headers: ArraySlice<KafkaHeader>,
        appendingTo fields: [rd_kafka_vu_t],
        _ body: ([rd_kafka_vu_t]) -> KafkaError?
    ) -> KafkaError? {
        guard let header = headers.first else { return body(fields) }
        return header.key.withCString { name in
            func next(_ bytes: UnsafeRawBufferPointer?) -> KafkaError? {
                var entry = rd_kafka_vu_t()
                entry.vtype = RD_KAFKA_VTYPE_HEADER
                entry.u.header.name = name
                entry.u.header.val = bytes.map { UnsafeRawPointer($0.baseAddress ?? UnsafeRawPointer(emptyBytes)) }
                entry.u.header.size = bytes?.count ?? 0
                return withHeaderFields(headers.dropFirst(), appendingTo: fields + [entry], body)
            }
            if let value = header.value { return value.withUnsafeBytes { next($0) } }
            return next(nil)
        }
    }

    /// Waits until every queued record is acknowledged or failed, or `timeoutMs` passes.
    ///
    /// `rd_kafka_flush` sends what lingers at once, then serves the reply queue in waits of up
    /// to 10 ms, ending one early only when an event arrives there. A producer that reports
    /// failed deliveries only gets no event for an acknowledgement, and one whose poll thread
    /// serves the reports rarely sees one, so each flush would last a whole wait; this flushes
    /// in `stepMs` steps and returns within a step of the last acknowledgement.
    func flush(timeoutMs: Int32, stepMs: Int32 = 1) throws {
        let deadline = ContinuousClock.now + .milliseconds(Int(max(0, timeoutMs)))
        while true {
            let result = rd_kafka_flush(handle, max(1, min(stepMs, timeoutMs)))
            if result == RD_KAFKA_RESP_ERR_NO_ERROR { return }
            guard result == RD_KAFKA_RESP_ERR__TIMED_OUT, ContinuousClock.now < deadline else {
                throw KafkaError(result, operation: "flush", detail: "\(outstandingCount) record(s) still outstanding")
            }
        }
    }
}
