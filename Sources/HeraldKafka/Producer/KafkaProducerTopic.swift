import CRdKafka

/// One topic of one `KafkaProducer`, resolved once: records enqueued with it skip
/// librdkafka's lookup of the topic by name (a lock and string compares per record), which is
/// what a hot path writing millions of records to one topic wants. Get it from
/// `KafkaProducer.topic(_:)`; it keeps its producer's librdkafka instance alive.
///
/// `@unchecked Sendable`: librdkafka topic handles are thread-safe.
public final class KafkaProducerTopic: @unchecked Sendable {
    public let name: String
    let handle: OpaquePointer
    let client: RDKafkaClient

    init(name: String, client: RDKafkaClient) throws {
        guard let handle = rd_kafka_topic_new(client.handle, name, nil) else {
            let code = rd_kafka_last_error()
            throw KafkaError(
                code: .init(code), message: String(cString: rd_kafka_err2str(code)), operation: "open topic", topic: name
            )
        }
        self.name = name
        self.handle = handle
        self.client = client
    }

    deinit { rd_kafka_topic_destroy(handle) }
}
