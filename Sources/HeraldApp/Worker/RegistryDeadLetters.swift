import Foundation
import HeraldKafka
import HeraldPipeline
import HeraldRegistry
import Logging
import Synchronization

/// The indexer's unreadable `herald.registrations` records, written to the dead-letter topic
/// with reason `unreadable_registration`, the problem and the original bytes, as the planner's,
/// fan-out's and sender's dead letters are. Its producer is made on the first dead letter: an
/// indexer that never meets one keeps no Kafka client for it.
final class RegistryDeadLetters: Sendable {
    private let configuration: KafkaProducerConfiguration
    private let topic: String
    private let logger: Logger
    private let producer = Mutex<KafkaProducer?>(nil)

    init(configuration: KafkaProducerConfiguration, topic: String, logger: Logger) {
        self.configuration = configuration
        self.topic = topic
        self.logger = logger
    }

    /// Writes `records` and returns once the broker has every one.
    func write(_ records: [(message: KafkaMessage, problem: String)]) async throws {
        let producer = try producer.withLock { held in
            if let held { return held }
            let made = try KafkaProducer(configuration: configuration, logger: logger)
            held = made
            return made
        }
        let now = Date()
        for record in records {
            let letter = DeadLetter(reason: "unreadable_registration", message: record.problem, source: record.message, now: now)
            _ = try await producer.send(letter.outgoing(topic: topic))
            logger.warning(
                "unreadable registry record dead-lettered",
                metadata: [
                    "source": "\(record.message.topic)/\(record.message.partition)/\(record.message.offset)", "topic": "\(topic)",
                    "problem": "\(record.problem)",
                ])
        }
    }

    func shutdown() async {
        let held = producer.withLock { held in
            defer { held = nil }
            return held
        }
        await held?.shutdown()
    }
}
