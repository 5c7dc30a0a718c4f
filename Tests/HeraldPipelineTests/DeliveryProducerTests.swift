import HeraldKafka
@testable import HeraldPipeline
import Testing

@Suite("Delivery producer settings")
struct DeliveryProducerTests {
    /// A lane writes one partition and librdkafka sends one request per partition at a time
    /// for an idempotent producer; a second full batch queued behind it keeps the broker
    /// thread polling without sleep (docs/performance.md, item 36). The cap keeps the queue
    /// between one and two batches.
    @Test("the delivery producer queues more than one batch and less than two")
    func queueHoldsBetweenOneAndTwoBatches() {
        let configuration = PipelineConfiguration()
        let producer = configuration.deliveryProducerConfiguration(clientId: "lane", transactionalId: "lane-0")
        let capBytes = producer.queueBufferingMaxKbytes * 1_024
        #expect(capBytes > producer.batchSize)
        #expect(capBytes < 2 * producer.batchSize)
        let properties = producer.librdkafkaProperties()
        #expect(properties["queue.buffering.max.kbytes"] == String(configuration.deliveryQueueMaxKbytes))
        #expect(properties["batch.size"] == String(configuration.deliveryBatchSize))
    }
}
