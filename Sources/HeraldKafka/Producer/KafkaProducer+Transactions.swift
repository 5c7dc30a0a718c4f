// The transactional API. Each call throws a `KafkaError` whose flags say what to do next:
// `isRetriable` -> call again; `txnRequiresAbort` -> `abortTransaction()` and redo the work;
// `isFatal` -> this producer is fenced or broken: recreate it.
extension KafkaProducer {
    /// Registers `transactionalId` with the coordinator, fencing older instances with the
    /// same id and aborting their open transaction. Call once before the first transaction.
    public func initTransactions(timeout: Duration = .seconds(30)) async throws {
        let client = try transactionalClient("init transactions")
        try await runBlocking(on: blockingQueue, deadline: timeout + blockingCallGrace, operation: "init transactions", onExpiry: abandon) {
            try client.initTransactions(timeoutMs: timeout.rdKafkaMilliseconds)
        }
    }

    /// Starts a transaction locally (no round trip).
    public func beginTransaction() throws {
        try transactionalClient("begin transaction").beginTransaction()
    }

    /// Makes committing these consumer offsets part of the current transaction, so the
    /// records produced and the input consumed become visible together or not at all.
    public func sendOffsetsToTransaction(
        _ offsets: [KafkaTopicPartitionOffset],
        groupMetadata: KafkaConsumerGroupMetadata,
        timeout: Duration = .seconds(30)
    ) async throws {
        let client = try transactionalClient("send offsets to transaction")
        try await runBlocking(
            on: blockingQueue, deadline: timeout + blockingCallGrace, operation: "send offsets to transaction", onExpiry: abandon
        ) {
            try client.sendOffsetsToTransaction(offsets, groupMetadata: groupMetadata, timeoutMs: timeout.rdKafkaMilliseconds)
        }
    }

    /// Flushes the transaction's records and commits it.
    public func commitTransaction(timeout: Duration = .seconds(30)) async throws {
        let client = try transactionalClient("commit transaction")
        try await runBlocking(on: blockingQueue, deadline: timeout + blockingCallGrace, operation: "commit transaction", onExpiry: abandon)
        {
            try client.commitTransaction(timeoutMs: timeout.rdKafkaMilliseconds)
        }
    }

    /// Aborts the transaction: its records are marked aborted and its offsets not committed.
    public func abortTransaction(timeout: Duration = .seconds(30)) async throws {
        let client = try transactionalClient("abort transaction")
        try await runBlocking(on: blockingQueue, deadline: timeout + blockingCallGrace, operation: "abort transaction", onExpiry: abandon) {
            try client.abortTransaction(timeoutMs: timeout.rdKafkaMilliseconds)
        }
    }

    private func transactionalClient(_ operation: String) throws -> RDKafkaClient {
        guard configuration.transactionalId != nil else {
            throw KafkaError(code: .state, message: "the producer has no transactionalId", operation: operation)
        }
        return client
    }
}
