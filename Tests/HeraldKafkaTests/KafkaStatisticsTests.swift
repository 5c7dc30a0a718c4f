import Foundation
import HeraldKafka
import HeraldTestSupport
import Testing

/// `statistics.interval.ms` (set through the Kafka config file's properties) makes a client
/// log librdkafka's statistics document, which operators and the bench read.
@Suite("librdkafka statistics")
struct KafkaStatisticsTests {
    @Test("a producer with statistics.interval.ms logs librdkafka's statistics as one JSON document")
    func producerLogsStatistics() async throws {
        let capture = StatisticsCapture()
        let logger = capture.logger()
        // No broker is needed: the statistics timer runs whether or not one answers.
        var configuration = KafkaProducerConfiguration(bootstrapServers: "127.0.0.1:1")
        configuration.extra = ["statistics.interval.ms": "100"]
        let producer = try KafkaProducer(configuration: configuration, logger: logger)
        let deadline = ContinuousClock.now.advanced(by: .seconds(10))
        while capture.captured.isEmpty, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        await producer.shutdown(flushTimeout: .milliseconds(100))
        let document = try #require(capture.captured.first, "no statistics logged within 10 s")
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(document.utf8)) as? [String: Any])
        #expect(parsed["type"] as? String == "producer")
        #expect(parsed["brokers"] is [String: Any])
        #expect(parsed["txmsgs"] is NSNumber)
    }

    @Test("without statistics.interval.ms nothing is logged")
    func noStatisticsByDefault() async throws {
        let capture = StatisticsCapture()
        let logger = capture.logger()
        let producer = try KafkaProducer(configuration: KafkaProducerConfiguration(bootstrapServers: "127.0.0.1:1"), logger: logger)
        try await Task.sleep(for: .milliseconds(300))
        await producer.shutdown(flushTimeout: .milliseconds(100))
        #expect(capture.captured.isEmpty)
    }
}
