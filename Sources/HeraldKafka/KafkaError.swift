/// A failure reported by librdkafka or by the broker, with enough context to act on it.
///
/// `code` is an open set (a struct, not an enum) so new librdkafka codes never break callers.
/// The three flags follow librdkafka's own classification: a fatal error means the client
/// instance is unusable and must be recreated; a retriable one may succeed if the same call
/// is repeated; `txnRequiresAbort` means the current transaction must be aborted before the
/// producer can start a new one.
public struct KafkaError: Error, Sendable, CustomStringConvertible {
    /// A librdkafka `rd_kafka_resp_err_t` value (negative: raised by the client, positive:
    /// a Kafka protocol error returned by the broker).
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }
        public var description: String { "\(name) (\(rawValue))" }
    }

    public var code: Code
    /// What went wrong, in librdkafka's or the broker's words.
    public var message: String
    /// The operation that failed, for example "commit transaction" or "create topic".
    public var operation: String
    /// The topic involved, when there is one.
    public var topic: String?
    public var isFatal: Bool
    public var isRetriable: Bool
    public var txnRequiresAbort: Bool

    public init(
        code: Code,
        message: String,
        operation: String,
        topic: String? = nil,
        isFatal: Bool = false,
        isRetriable: Bool? = nil,
        txnRequiresAbort: Bool = false
    ) {
        self.code = code
        self.message = message
        self.operation = operation
        self.topic = topic
        self.isFatal = isFatal || code == .fatal
        self.isRetriable = isRetriable ?? Code.transient.contains(code)
        self.txnRequiresAbort = txnRequiresAbort
    }

    /// A record no retry can deliver: over the producer's or the topic's size limit.
    public var isRecordTooLarge: Bool {
        code == .messageSizeTooLarge || code == .recordListTooLarge
    }

    public var description: String {
        var text = "Kafka: \(operation) failed"
        if let topic { text += " for topic '\(topic)'" }
        text += ": \(message) [\(code.name)]"
        if isFatal {
            text += " (fatal: recreate the client)"
        } else if txnRequiresAbort {
            text += " (abort the transaction)"
        } else if isRetriable {
            text += " (retriable)"
        }
        return text
    }
}
