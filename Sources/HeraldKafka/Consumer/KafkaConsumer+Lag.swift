// Consumer lag for the operator's metrics: how many records the group has not committed.
extension KafkaConsumer {
    /// Low and high watermarks of one partition, asked of its leader.
    public func queryWatermarkOffsets(topic: String, partition: Int32, timeout: Duration = .seconds(10)) async throws -> KafkaWatermarks {
        try checkOpen("query watermarks")
        let client = client
        return try await runBlocking(on: blockingQueue) {
            try client.queryWatermarks(topic: topic, partition: partition, timeoutMs: timeout.rdKafkaMilliseconds)
        }
    }

    /// Lag of the group on `partitions` (default: this consumer's current assignment).
    public func lag(for partitions: [KafkaTopicPartition]? = nil, timeout: Duration = .seconds(10)) async throws -> [KafkaPartitionLag] {
        let targets = try partitions ?? assignment()
        guard !targets.isEmpty else { return [] }
        let committed = try await self.committed(targets, timeout: timeout)
        let client = client
        return try await runBlocking(on: blockingQueue) {
            try committed.map { entry in
                KafkaPartitionLag(
                    partition: entry.topicPartition,
                    committed: entry.isValid ? entry.offset : nil,
                    watermarks: try client.queryWatermarks(
                        topic: entry.topic,
                        partition: entry.partition,
                        timeoutMs: timeout.rdKafkaMilliseconds
                    )
                )
            }
        }
    }
}
