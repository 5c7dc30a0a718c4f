/// A consumer's group identity (group, generation, member) as librdkafka serialises it, so it
/// can cross threads and be handed to `KafkaProducer.sendOffsetsToTransaction`.
public struct KafkaConsumerGroupMetadata: Sendable, Hashable {
    /// librdkafka's opaque serialisation (`rd_kafka_consumer_group_metadata_write`).
    public var serialized: [UInt8]

    public init(serialized: [UInt8]) { self.serialized = serialized }
}
