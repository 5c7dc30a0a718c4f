import CRdKafka

/// Owns an `rd_kafka_topic_partition_list_t` built from Swift values, for one C call.
final class RDKafkaTopicPartitionList {
    let pointer: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>

    init(_ partitions: [KafkaTopicPartition], offset: Int64 = KafkaTopicPartitionOffset.invalid) {
        pointer = rd_kafka_topic_partition_list_new(Int32(max(1, partitions.count)))
        for partition in partitions {
            rd_kafka_topic_partition_list_add(pointer, partition.topic, partition.partition).pointee.offset = offset
        }
    }

    init(_ offsets: [KafkaTopicPartitionOffset]) {
        pointer = rd_kafka_topic_partition_list_new(Int32(max(1, offsets.count)))
        for entry in offsets {
            rd_kafka_topic_partition_list_add(pointer, entry.topic, entry.partition).pointee.offset = entry.offset
        }
    }

    /// Topics to subscribe to (partition "unassigned").
    init(topics: [String]) {
        pointer = rd_kafka_topic_partition_list_new(Int32(max(1, topics.count)))
        for topic in topics { rd_kafka_topic_partition_list_add(pointer, topic, RD_KAFKA_PARTITION_UA) }
    }

    deinit { rd_kafka_topic_partition_list_destroy(pointer) }

    var offsets: [KafkaTopicPartitionOffset] { Self.offsets(of: pointer) }

    /// The first per-partition error a call left in the list.
    func firstError(operation: String) -> KafkaError? {
        let list = pointer.pointee
        for index in 0..<Int(list.cnt) where list.elems[index].err != RD_KAFKA_RESP_ERR_NO_ERROR {
            let element = list.elems[index]
            return KafkaError(
                element.err,
                operation: operation,
                topic: String(cString: element.topic),
                detail: "partition \(element.partition)"
            )
        }
        return nil
    }

    static func partitions(of list: UnsafePointer<rd_kafka_topic_partition_list_t>) -> [KafkaTopicPartition] {
        (0..<Int(list.pointee.cnt)).map { index in
            let element = list.pointee.elems[index]
            return KafkaTopicPartition(topic: String(cString: element.topic), partition: element.partition)
        }
    }

    static func offsets(of list: UnsafePointer<rd_kafka_topic_partition_list_t>) -> [KafkaTopicPartitionOffset] {
        (0..<Int(list.pointee.cnt)).map { index in
            let element = list.pointee.elems[index]
            return KafkaTopicPartitionOffset(topic: String(cString: element.topic), partition: element.partition, offset: element.offset)
        }
    }
}
