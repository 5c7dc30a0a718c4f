import CRdKafka

// The codes Herald reacts to; every other librdkafka code still arrives intact in `rawValue`.
extension KafkaError.Code {
    init(_ error: rd_kafka_resp_err_t) { self.init(rawValue: error.rawValue) }

    var rdKafkaValue: rd_kafka_resp_err_t { rd_kafka_resp_err_t(rawValue: rawValue) }

    /// librdkafka's symbolic name, for example `_QUEUE_FULL` or `TOPIC_ALREADY_EXISTS`.
    public var name: String { String(cString: rd_kafka_err2name(rdKafkaValue)) }

    public static let noError = Self(RD_KAFKA_RESP_ERR_NO_ERROR)
    public static let queueFull = Self(RD_KAFKA_RESP_ERR__QUEUE_FULL)
    public static let messageTimedOut = Self(RD_KAFKA_RESP_ERR__MSG_TIMED_OUT)
    public static let timedOut = Self(RD_KAFKA_RESP_ERR__TIMED_OUT)
    public static let transport = Self(RD_KAFKA_RESP_ERR__TRANSPORT)
    public static let allBrokersDown = Self(RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN)
    public static let unknownTopic = Self(RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC)
    public static let unknownPartition = Self(RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION)
    public static let unknownTopicOrPartition = Self(RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART)
    public static let topicAlreadyExists = Self(RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS)
    public static let invalidArgument = Self(RD_KAFKA_RESP_ERR__INVALID_ARG)
    public static let invalidConfiguration = Self(RD_KAFKA_RESP_ERR_INVALID_CONFIG)
    public static let state = Self(RD_KAFKA_RESP_ERR__STATE)
    public static let fatal = Self(RD_KAFKA_RESP_ERR__FATAL)
    public static let fenced = Self(RD_KAFKA_RESP_ERR__FENCED)
    public static let producerFenced = Self(RD_KAFKA_RESP_ERR_PRODUCER_FENCED)
    public static let destroyed = Self(RD_KAFKA_RESP_ERR__DESTROY)
    public static let noOffset = Self(RD_KAFKA_RESP_ERR__NO_OFFSET)
    public static let partitionEOF = Self(RD_KAFKA_RESP_ERR__PARTITION_EOF)
    public static let rebalanceInProgress = Self(RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS)
    public static let illegalGeneration = Self(RD_KAFKA_RESP_ERR_ILLEGAL_GENERATION)
    public static let unknownMemberID = Self(RD_KAFKA_RESP_ERR_UNKNOWN_MEMBER_ID)
    public static let assignmentLost = Self(RD_KAFKA_RESP_ERR__ASSIGNMENT_LOST)
    public static let notCoordinator = Self(RD_KAFKA_RESP_ERR_NOT_COORDINATOR)
    public static let coordinatorLoadInProgress = Self(RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS)
    public static let coordinatorNotAvailable = Self(RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE)
    /// A record over the producer's `message.max.bytes` (refused locally) or the topic's
    /// `max.message.bytes` (refused by the broker).
    public static let messageSizeTooLarge = Self(RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE)
    public static let recordListTooLarge = Self(RD_KAFKA_RESP_ERR_RECORD_LIST_TOO_LARGE)
    public static let purgedInQueue = Self(RD_KAFKA_RESP_ERR__PURGE_QUEUE)
    public static let purgedInFlight = Self(RD_KAFKA_RESP_ERR__PURGE_INFLIGHT)

    /// Codes that describe a passing condition when they come without librdkafka's own
    /// retriable flag (plain `rd_kafka_resp_err_t` results carry no flags).
    static let transient: Set<Self> = [
        .queueFull, .messageTimedOut, .timedOut, .transport, .allBrokersDown,
        .rebalanceInProgress, .notCoordinator, .coordinatorLoadInProgress, .coordinatorNotAvailable,
    ]
}

extension KafkaError {
    /// An error from a plain response code, with librdkafka's text for it.
    init(_ error: rd_kafka_resp_err_t, operation: String, topic: String? = nil, detail: String? = nil) {
        let text = String(cString: rd_kafka_err2str(error))
        self.init(
            code: Code(error),
            message: detail.map { "\($0): \(text)" } ?? text,
            operation: operation,
            topic: topic
        )
    }

    /// Takes ownership of an `rd_kafka_error_t` (destroying it) and keeps its classification.
    init(consuming error: OpaquePointer, operation: String, topic: String? = nil) {
        defer { rd_kafka_error_destroy(error) }
        self.init(
            code: Code(rd_kafka_error_code(error)),
            message: rd_kafka_error_string(error).map { String(cString: $0) } ?? "unknown error",
            operation: operation,
            topic: topic,
            isFatal: rd_kafka_error_is_fatal(error) != 0,
            isRetriable: rd_kafka_error_is_retriable(error) != 0,
            txnRequiresAbort: rd_kafka_error_txn_requires_abort(error) != 0
        )
    }

    /// Throws when `error` (an `rd_kafka_error_t *` or NULL) reports a failure.
    static func check(_ error: OpaquePointer?, operation: String, topic: String? = nil) throws {
        if let error { throw KafkaError(consuming: error, operation: operation, topic: topic) }
    }

    static func check(_ error: rd_kafka_resp_err_t, operation: String, topic: String? = nil) throws {
        if error != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError(error, operation: operation, topic: topic) }
    }
}
