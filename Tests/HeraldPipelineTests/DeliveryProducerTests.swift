import HeraldKafka
@testable import HeraldPipeline
import Testing

/// A lane writes one partition, and librdkafka sends an idempotent producer's partition one
/// request at a time; with more than two batches queued, the lanes' broker threads woke 0.7
/// times per delivery in the bench's 1M broadcast, and under two, 0.06 (docs/performance.md,
/// "What we tried"). librdkafka's statistics in a bench run show the effect; this checks the setting.
@Suite("Delivery producer settings")
struct DeliveryProducerTests {
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
