import CRdKafka

extension RDKafkaClient {
    /// The bootstrap servers of the mock cluster this client created (librdkafka's
    /// `test.mock.num.brokers`), nil for a client of a real cluster.
    var mockClusterBootstraps: String? {
        guard let cluster = rd_kafka_handle_mock_cluster(handle), let text = rd_kafka_mock_cluster_bootstraps(cluster) else {
            return nil
        }
        return String(cString: text)
    }
}

extension KafkaProducer {
    /// With `extra["test.mock.num.brokers"]` set, librdkafka starts an in-process mock cluster
    /// for this producer: its address, for other clients of the same process or of others.
    public var mockClusterBootstraps: String? { client.mockClusterBootstraps }
}
