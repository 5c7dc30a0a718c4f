import CRdKafka

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
