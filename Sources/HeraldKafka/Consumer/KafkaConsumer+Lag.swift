// Consumer lag for the operator's metrics: how many records the group has not committed.
extension KafkaConsumer {
    /// Low and high watermarks of one partition, asked of its leader (ListOffsets).
    ///
    /// Tansu 0.6 answers with the base offset of the last record batch + 1 rather than the
    /// true end of the log, so against Tansu prefer `cachedWatermarkOffsets` for partitions
    /// this consumer fetches.
    public func queryWatermarkOffsets(topic: String, partition: Int32, timeout: Duration = .seconds(10)) async throws -> KafkaWatermarks {
        try checkOpen("query watermarks")
        let client = client
        return try await runBlocking(on: blockingQueue) {
            try client.queryWatermarks(topic: topic, partition: partition, timeoutMs: timeout.rdKafkaMilliseconds)
        }
    }

    /// Watermarks from the latest fetch response for a partition this consumer reads (no
    /// round trip); nil before its first fetch.
    public func cachedWatermarkOffsets(topic: String, partition: Int32) -> KafkaWatermarks? {
        client.cachedWatermarks(topic: topic, partition: partition)
    }

    /// Lag of the group on `partitions` (default: this consumer's current assignment), from
    /// the committed offsets and the fetched watermarks, querying the broker only for
    /// partitions not fetched yet.
    public func lag(for partitions: [KafkaTopicPartition]? = nil, timeout: Duration = .seconds(10)) async throws -> [KafkaPartitionLag] {
        let targets = try partitions ?? assignment()
        guard !targets.isEmpty else { return [] }
        let committed = try await self.committed(targets, timeout: timeout)
        var lags: [KafkaPartitionLag] = []
        for entry in committed {
            var watermarks = cachedWatermarkOffsets(topic: entry.topic, partition: entry.partition)
            if watermarks == nil {
                watermarks = try await queryWatermarkOffsets(topic: entry.topic, partition: entry.partition, timeout: timeout)
            }
            lags.append(
                KafkaPartitionLag(partition: entry.topicPartition, committed: entry.isValid ? entry.offset : nil, watermarks: watermarks!))
        }
        return lags
    }
}
