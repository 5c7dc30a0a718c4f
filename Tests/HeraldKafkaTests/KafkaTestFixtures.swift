import Foundation
import HeraldKafka
import HeraldTestSupport
import Logging
import Synchronization

// Shared set-up for the broker-backed tests: client settings tuned for Tansu (whose group
// join waits about half of session.timeout.ms: TestBroker.sessionTimeoutMs) and small polling
// helpers.
extension TestBroker {
    func producerConfiguration() -> KafkaProducerConfiguration {
        var configuration = KafkaProducerConfiguration(bootstrapServers: bootstrapServers)
        configuration.lingerMs = 1
        configuration.messageTimeoutMs = 30_000
        return configuration
    }

    func consumerConfiguration(group: String?) -> KafkaConsumerConfiguration {
        var configuration = KafkaConsumerConfiguration(bootstrapServers: bootstrapServers, groupId: group)
        configuration.sessionTimeoutMs = TestBroker.sessionTimeoutMs
        configuration.heartbeatIntervalMs = 500
        // Tansu's groups never form again after a leader leaves mid-rebalance.
        configuration.leaveGroupOnClose = false
        configuration.autoOffsetReset = .earliest
        return configuration
    }

    func admin() throws -> KafkaAdmin {
        try KafkaAdmin(configuration: KafkaAdminConfiguration(bootstrapServers: bootstrapServers), logger: testLogger)
    }

    func createTopic(_ name: String, partitions: Int, configs: [String: String] = [:]) async throws {
        try await admin().createTopics([KafkaTopicSpec(name: name, partitions: partitions, configs: configs)])
    }
}

let testLogger: Logger = {
    var logger = Logger(label: "herald.kafka.tests")
    logger.logLevel = ProcessInfo.processInfo.environment["HERALD_TEST_KAFKA_DEBUG"] == nil ? .warning : .debug
    return logger
}()

extension KafkaConsumer {
    /// Polls until `count` records arrived, or none arrived for `stallLimit`; returns what arrived.
    func collect(_ count: Int, stallLimit: Duration = .seconds(60)) async throws -> [KafkaMessage] {
        var received: [KafkaMessage] = []
        var lastArrival = ContinuousClock.now
        while received.count < count, ContinuousClock.now - lastArrival < stallLimit {
            let batch = try await pollBatch(maxMessages: count - received.count, timeout: .milliseconds(250))
            if !batch.isEmpty { lastArrival = .now }
            received += batch
        }
        return received
    }
}

func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

func text(_ bytes: [UInt8]?) -> String? { bytes.map { String(decoding: $0, as: UTF8.self) } }

/// Polls `condition` until it holds or `timeout` passes (generous: it only ends a test that
/// would otherwise hang); returns whether it held.
func eventually(timeout: Duration = .seconds(120), _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now.advanced(by: timeout)
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(100))
    }
    return try await condition()
}

extension KafkaOutgoingMessage {
    /// Text key and value, for tests that number their records.
    init(topic: String, key: String?, value: String) {
        self.init(topic: topic, key: key.map { Array($0.utf8) }, value: Array(value.utf8))
    }
}

/// A TCP port on 127.0.0.1 that takes connections and never answers them, as a hung broker
/// would: a client pointed at it never learns any metadata, so every record it enqueues fails
/// at its message timeout, in the delivery reports, and never at enqueue.
final class SilentListener {
    let address: String
    private let descriptor: Int32

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw TestServerError(message: "socket() failed for the silent listener") }
        var socketAddress = sockaddr_in()
        socketAddress.sin_family = sa_family_t(AF_INET)
        socketAddress.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let listening = withUnsafeMutablePointer(to: &socketAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 && listen(descriptor, 16) == 0
                    && getsockname(descriptor, $0, &length) == 0
            }
        }
        guard listening else {
            close(descriptor)
            throw TestServerError(message: "the silent listener could not listen on 127.0.0.1")
        }
        self.descriptor = descriptor
        address = "127.0.0.1:\(UInt16(bigEndian: socketAddress.sin_port))"
    }

    deinit { close(descriptor) }
}
