import CRdKafka
import struct Foundation.Date

extension RDKafkaClient {
    /// Routes the main queue (errors, logs' companions, rebalances) into the consumer queue
    /// so one `rd_kafka_consumer_poll` loop serves everything.
    func redirectMainQueueToConsumer() throws {
        try KafkaError.check(rd_kafka_poll_set_consumer(handle), operation: "set up consumer queue")
    }

    /// Ends a `consumerPoll` blocked on the consumer queue now, from another thread (or the
    /// next one, if none is blocked). A no-op for a client without a consumer queue.
    func yieldConsumerPoll() {
        guard let queue = rd_kafka_queue_get_consumer(handle) else { return }
        rd_kafka_queue_yield(queue)
        rd_kafka_queue_destroy(queue)
    }

    func subscribe(topics: [String]) throws {
        let list = RDKafkaTopicPartitionList(topics: topics)
        try KafkaError.check(rd_kafka_subscribe(handle, list.pointer), operation: "subscribe", topic: topics.joined(separator: ","))
    }

    func assign(_ offsets: [KafkaTopicPartitionOffset]) throws {
        let list = RDKafkaTopicPartitionList(offsets)
        try KafkaError.check(rd_kafka_assign(handle, list.pointer), operation: "assign partitions")
    }

    /// One blocking poll. Returns nil on timeout and for events that are not records; throws
    /// only for fatal consumer errors (others are logged, librdkafka recovers by itself).
    func consumerPoll(timeoutMs: Int32) throws -> KafkaMessage? {
        guard let message = try consumerPollRecord(timeoutMs: timeoutMs) else { return nil }
        defer { rd_kafka_message_destroy(message) }
        return Self.copyMessage(message)
    }

    /// One blocking poll that keeps the record in librdkafka's memory: the caller must
    /// `rd_kafka_message_destroy` it. Nil on timeout and for events that are not records.
    func consumerPollRecord(timeoutMs: Int32) throws -> UnsafeMutablePointer<rd_kafka_message_t>? {
        guard let message = rd_kafka_consumer_poll(handle, timeoutMs) else { return nil }
        let code = message.pointee.err
        guard code == RD_KAFKA_RESP_ERR_NO_ERROR else {
            defer { rd_kafka_message_destroy(message) }
            if code == RD_KAFKA_RESP_ERR__PARTITION_EOF { return nil }
            let topic = message.pointee.rkt.map { String(cString: rd_kafka_topic_name($0)) }
            if code == RD_KAFKA_RESP_ERR__FATAL, let fatal = fatalError(operation: "consume") { throw fatal }
            let detail = message.pointee.payload.map {
                String(decoding: UnsafeRawBufferPointer(start: $0, count: message.pointee.len), as: UTF8.self)
            }
            let error = KafkaError(code, operation: "consume", topic: topic, detail: detail)
            if error.isFatal { throw error }
            callbacks.logger.warning("consume error", metadata: ["error": "\(error)"])
            return nil
        }
        return message
    }

    private static func copyMessage(_ message: UnsafePointer<rd_kafka_message_t>) -> KafkaMessage {
        let record = message.pointee
        let key = record.key.map { Array(UnsafeRawBufferPointer(start: $0, count: record.key_len)) }
        let value = record.payload.map { Array(UnsafeRawBufferPointer(start: $0, count: record.len)) }
        var timestampType = RD_KAFKA_TIMESTAMP_NOT_AVAILABLE
        let milliseconds = rd_kafka_message_timestamp(message, &timestampType)
        let timestamp = milliseconds >= 0 ? Date(timeIntervalSince1970: Double(milliseconds) / 1000) : nil

        var headers: [KafkaHeader] = []
        var headerList: OpaquePointer?
        if rd_kafka_message_headers(message, &headerList) == RD_KAFKA_RESP_ERR_NO_ERROR, let headerList {
            var index = 0
            var name: UnsafePointer<CChar>?
            var bytes: UnsafeRawPointer?
            var size = 0
            while rd_kafka_header_get_all(headerList, index, &name, &bytes, &size) == RD_KAFKA_RESP_ERR_NO_ERROR {
                headers.append(
                    KafkaHeader(
                        key: name.map { String(cString: $0) } ?? "",
                        value: bytes.map { Array(UnsafeRawBufferPointer(start: $0, count: size)) }
                    ))
                index += 1
            }
        }
        return KafkaMessage(
            topic: String(cString: rd_kafka_topic_name(record.rkt)),
            partition: record.partition,
            offset: record.offset,
            key: key,
            value: value,
            headers: headers,
            timestamp: timestamp
        )
    }

    func storeOffsets(_ offsets: [KafkaTopicPartitionOffset]) throws {
        let list = RDKafkaTopicPartitionList(offsets)
        try KafkaError.check(rd_kafka_offsets_store(handle, list.pointer), operation: "store offsets")
        if let error = list.firstError(operation: "store offsets") { throw error }
    }

    /// Commits `offsets`, or the stored offsets when nil. Blocks when `synchronous`.
    func commit(_ offsets: [KafkaTopicPartitionOffset]?, synchronous: Bool) throws {
        let list = offsets.map { RDKafkaTopicPartitionList($0) }
        let result = rd_kafka_commit(handle, list?.pointer, synchronous ? 0 : 1)
        // Nothing stored since the last commit is not a failure.
        if offsets == nil && result == RD_KAFKA_RESP_ERR__NO_OFFSET { return }
        try KafkaError.check(result, operation: offsets == nil ? "commit stored offsets" : "commit offsets")
        if synchronous, let error = list?.firstError(operation: "commit offsets") { throw error }
    }

    func committed(_ partitions: [KafkaTopicPartition], timeoutMs: Int32) throws -> [KafkaTopicPartitionOffset] {
        let list = RDKafkaTopicPartitionList(partitions)
        try KafkaError.check(rd_kafka_committed(handle, list.pointer, timeoutMs), operation: "fetch committed offsets")
        if let error = list.firstError(operation: "fetch committed offsets") { throw error }
        return list.offsets
    }

    /// Moves the fetch position of assigned partitions (purging what was fetched beyond it).
    func seek(_ offsets: [KafkaTopicPartitionOffset], timeoutMs: Int32) throws {
        let list = RDKafkaTopicPartitionList(offsets)
        try KafkaError.check(rd_kafka_seek_partitions(handle, list.pointer, timeoutMs), operation: "seek")
        if let error = list.firstError(operation: "seek") { throw error }
    }

    func position(_ partitions: [KafkaTopicPartition]) throws -> [KafkaTopicPartitionOffset] {
        let list = RDKafkaTopicPartitionList(partitions)
        try KafkaError.check(rd_kafka_position(handle, list.pointer), operation: "read positions")
        return list.offsets
    }

    func pause(_ partitions: [KafkaTopicPartition]) throws {
        let list = RDKafkaTopicPartitionList(partitions)
        try KafkaError.check(rd_kafka_pause_partitions(handle, list.pointer), operation: "pause partitions")
        if let error = list.firstError(operation: "pause partitions") { throw error }
    }

    func resume(_ partitions: [KafkaTopicPartition]) throws {
        let list = RDKafkaTopicPartitionList(partitions)
        try KafkaError.check(rd_kafka_resume_partitions(handle, list.pointer), operation: "resume partitions")
        if let error = list.firstError(operation: "resume partitions") { throw error }
    }

    func assignment() throws -> [KafkaTopicPartition] {
        var list: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?
        try KafkaError.check(rd_kafka_assignment(handle, &list), operation: "read assignment")
        guard let list else { return [] }
        defer { rd_kafka_topic_partition_list_destroy(list) }
        return RDKafkaTopicPartitionList.partitions(of: list)
    }

    func groupMetadata() throws -> KafkaConsumerGroupMetadata {
        let operation = "read consumer group metadata"
        guard let metadata = rd_kafka_consumer_group_metadata(handle) else {
            throw KafkaError(code: .state, message: "this consumer has no group (set groupId)", operation: operation)
        }
        defer { rd_kafka_consumer_group_metadata_destroy(metadata) }
        var buffer: UnsafeMutableRawPointer?
        var size = 0
        try KafkaError.check(rd_kafka_consumer_group_metadata_write(metadata, &buffer, &size), operation: operation)
        defer { rd_kafka_mem_free(nil, buffer) }
        return KafkaConsumerGroupMetadata(serialized: buffer.map { Array(UnsafeRawBufferPointer(start: $0, count: size)) } ?? [])
    }

    /// Leaves the group (revoking the assignment through the rebalance callback). Blocks.
    func closeConsumer() throws {
        try KafkaError.check(rd_kafka_consumer_close(handle), operation: "close consumer")
    }

    /// For each partition, the first offset whose record timestamp is at or after the given
    /// one (milliseconds since 1970), or the end (`KafkaTopicPartitionOffset.end`) when none is.
    func offsetsForTimes(_ times: [KafkaTopicPartitionOffset], timeoutMs: Int32) throws -> [KafkaTopicPartitionOffset] {
        let list = RDKafkaTopicPartitionList(times)
        try KafkaError.check(rd_kafka_offsets_for_times(handle, list.pointer, timeoutMs), operation: "look up offsets for times")
        if let error = list.firstError(operation: "look up offsets for times") { throw error }
        return list.offsets
    }

    func queryWatermarks(topic: String, partition: Int32, timeoutMs: Int32) throws -> KafkaWatermarks {
        var low: Int64 = 0
        var high: Int64 = 0
        try KafkaError.check(
            rd_kafka_query_watermark_offsets(handle, topic, partition, &low, &high, timeoutMs),
            operation: "query watermarks (partition \(partition))",
            topic: topic
        )
        return KafkaWatermarks(low: low, high: high)
    }
}

extension RDKafkaClient {
    /// Watermarks as last reported in fetch responses (no round trip); nil before the first
    /// fetch of the partition.
    func cachedWatermarks(topic: String, partition: Int32) -> KafkaWatermarks? {
        var low: Int64 = -1
        var high: Int64 = -1
        let result = rd_kafka_get_watermark_offsets(handle, topic, partition, &low, &high)
        guard result == RD_KAFKA_RESP_ERR_NO_ERROR, high >= 0 else { return nil }
        return KafkaWatermarks(low: max(0, low), high: high)
    }
}
