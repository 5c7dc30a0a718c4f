import Foundation
// Offsets are always "the next record to read": store or commit `message.nextOffset`, not
// `message.offset`, or the last record is read again after a restart.
extension KafkaConsumer {
    /// Marks `message` as done; `commitStored()` (or auto-commit) writes it to the group.
    public func storeOffset(_ message: KafkaMessage) throws {
        try storeOffsets([message.nextOffset])
    }

    public func storeOffsets(_ offsets: [KafkaTopicPartitionOffset]) throws {
        try checkOpen("store offsets")
        try client.storeOffsets(offsets)
    }

    /// Commits these offsets. Synchronous commits wait for the broker and throw its verdict
    /// (for example `rebalanceInProgress` when the partitions are moving).
    public func commit(_ offsets: [KafkaTopicPartitionOffset], synchronous: Bool = true) async throws {
        try checkOpen("commit offsets")
        try checkGroup("commit offsets")
        let client = client
        if synchronous {
            try await runBlocking(on: blockingQueue) { try client.commit(offsets, synchronous: true) }
        } else {
            try client.commit(offsets, synchronous: false)
        }
    }

    /// Commits `message.nextOffset`.
    public func commit(_ message: KafkaMessage, synchronous: Bool = true) async throws {
        try await commit([message.nextOffset], synchronous: synchronous)
    }

    /// Commits every offset stored with `storeOffset`. Nothing stored is not an error.
    public func commitStored(synchronous: Bool = true) async throws {
        try checkOpen("commit stored offsets")
        try checkGroup("commit stored offsets")
        let client = client
        if synchronous {
            try await runBlocking(on: blockingQueue) { try client.commit(nil, synchronous: true) }
        } else {
            try client.commit(nil, synchronous: false)
        }
    }

    /// The group's committed offsets; `offset` is `KafkaTopicPartitionOffset.invalid` where
    /// the group never committed.
    public func committed(_ partitions: [KafkaTopicPartition], timeout: Duration = .seconds(10)) async throws -> [KafkaTopicPartitionOffset]
    {
        try checkOpen("fetch committed offsets")
        let client = client
        return try await runBlocking(on: blockingQueue) {
            try client.committed(partitions, timeoutMs: timeout.rdKafkaMilliseconds)
        }
    }

    /// Moves every assigned partition back to the group's committed offset (the earliest
    /// record where the group never committed), staying in the group: what a consumer-side
    /// transaction that aborted needs before its records are read again, without the
    /// rebalance that leaving and rejoining would cause.
    public func rewindToCommitted(timeout: Duration = .seconds(10)) async throws {
        try checkOpen("rewind to committed offsets")
        let client = client
        try await runBlocking(on: blockingQueue) {
            let assigned = try client.assignment()
            guard !assigned.isEmpty else { return }
            let committed = try client.committed(assigned, timeoutMs: timeout.rdKafkaMilliseconds)
            let targets = committed.map {
                $0.offset >= 0
                    ? $0 : KafkaTopicPartitionOffset(topic: $0.topic, partition: $0.partition, offset: KafkaTopicPartitionOffset.beginning)
            }
            try client.seek(targets, timeoutMs: timeout.rdKafkaMilliseconds)
        }
    }

    /// Moves assigned partitions to these offsets (`KafkaTopicPartitionOffset.beginning` to
    /// read a partition again from its start), staying in the group.
    public func seek(_ offsets: [KafkaTopicPartitionOffset], timeout: Duration = .seconds(10)) async throws {
        try checkOpen("seek")
        let client = client
        try await runBlocking(on: blockingQueue) { try client.seek(offsets, timeoutMs: timeout.rdKafkaMilliseconds) }
    }

    /// The offset this consumer will read next on each partition (local, no round trip).
    public func position(_ partitions: [KafkaTopicPartition]) throws -> [KafkaTopicPartitionOffset] {
        try checkOpen("read positions")
        return try client.position(partitions)
    }

    /// Stops fetching from these partitions (membership and assignment are kept).
    public func pause(_ partitions: [KafkaTopicPartition]) throws {
        try checkOpen("pause partitions")
        try client.pause(partitions)
    }

    public func resume(_ partitions: [KafkaTopicPartition]) throws {
        try checkOpen("resume partitions")
        try client.resume(partitions)
    }

    /// The partitions this consumer currently owns.
    public func assignment() throws -> [KafkaTopicPartition] {
        try checkOpen("read assignment")
        return try client.assignment().sorted()
    }

    /// This member's group identity, for `KafkaProducer.sendOffsetsToTransaction`.
    public func groupMetadata() throws -> KafkaConsumerGroupMetadata {
        try checkOpen("read consumer group metadata")
        return try client.groupMetadata()
    }

    /// Commits without a real group would land under the assign-only placeholder group.
    private func checkGroup(_ operation: String) throws {
        guard configuration.groupId != nil else {
            throw KafkaError(code: .invalidArgument, message: "committing offsets needs a groupId", operation: operation)
        }
    }
}

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

    /// For each partition of `topic`, the first offset of a record timestamped at or after
    /// `time` (ListOffsets by timestamp); `KafkaTopicPartitionOffset.end` where there is none.
    /// Brokers that cannot look up by time may answer an earlier offset (Tansu answers the
    /// start of the log for a time past its end), so a reader must still check what it reads.
    public func offsets(
        topic: String, partitions: [Int32], at time: Date, timeout: Duration = .seconds(10)
    ) async throws -> [KafkaTopicPartitionOffset] {
        try checkOpen("look up offsets for times")
        let client = client
        let milliseconds = Int64((time.timeIntervalSince1970 * 1_000).rounded(.down))
        let query = partitions.map { KafkaTopicPartitionOffset(topic: topic, partition: $0, offset: milliseconds) }
        return try await runBlocking(on: blockingQueue) {
            try client.offsetsForTimes(query, timeoutMs: timeout.rdKafkaMilliseconds)
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
        let assigned = try assignment()
        let targets = partitions ?? assigned
        guard !targets.isEmpty else { return [] }
        let committed = try await self.committed(targets, timeout: timeout)
        let owned = Set(assigned)
        let positions = Dictionary(
            try position(targets.filter { owned.contains($0) }).map { ($0.topicPartition, $0.offset) }, uniquingKeysWith: { $1 })
        var lags: [KafkaPartitionLag] = []
        for entry in committed {
            var watermarks = cachedWatermarkOffsets(topic: entry.topic, partition: entry.partition)
            if watermarks == nil {
                watermarks = try await queryWatermarkOffsets(topic: entry.topic, partition: entry.partition, timeout: timeout)
            }
            lags.append(
                KafkaPartitionLag(
                    partition: entry.topicPartition, committed: entry.isValid ? entry.offset : nil, watermarks: watermarks!,
                    position: positions[entry.topicPartition]))
        }
        return lags
    }
}
