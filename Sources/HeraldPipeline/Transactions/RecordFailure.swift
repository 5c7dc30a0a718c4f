import HeraldKafka
import HeraldRedis
import HeraldRegistry

/// A record that no retry can handle: the loop that met it dead-letters it, with this reason,
/// and moves on. Handlers throw it for their own input (an unreadable task); the loop also
/// treats a record over the size limit this way.
public struct PermanentRecordFailure: Error, Sendable, CustomStringConvertible {
    /// Stable reason code for the dead letter (`unreadable_task`, `record_too_large`, ...).
    public var reason: String
    public var message: String
    /// The input record at fault.
    public var source: KafkaMessage
    /// Other records of the same batch found at fault in the same pass: all are dead-lettered
    /// in one retry, so no record's dead letter is written again by an attempt that failed on
    /// the next one.
    public var alongside: [PermanentRecordFailure] = []

    public init(reason: String, message: String, source: KafkaMessage) {
        self.reason = reason
        self.message = message
        self.source = source
    }

    public var description: String { "\(reason): \(message) (\(source.topic)/\(source.partition)/\(source.offset))" }

    /// `transform` of every record. When some records cannot be handled, throws one failure
    /// naming every one of them (`alongside`); any other error is thrown at once.
    public static func mapAll<T>(_ records: [KafkaMessage], _ transform: (KafkaMessage) throws -> T) throws -> [T] {
        var results: [T] = []
        results.reserveCapacity(records.count)
        var failures: [PermanentRecordFailure] = []
        for record in records {
            do {
                results.append(try transform(record))
            } catch let failure as PermanentRecordFailure {
                failures.append(failure)
            }
        }
        guard var first = failures.first else { return results }
        first.alongside = Array(failures.dropFirst())
        throw first
    }
}

/// What a failed transaction tells the loop to do next.
enum FailureKind: Equatable {
    /// The infrastructure failed (broker unreachable, timeouts, Redis down): abort, rewind to
    /// the committed offsets and retry with backoff, however long it takes.
    case transient
    /// The input is at fault: dead-letter the record named (or, when none is, find it by
    /// handling the batch's records one per transaction) and deliver the rest.
    case permanent(reason: String)

    static func of(_ error: any Error) -> FailureKind {
        switch error {
        case let failure as PermanentRecordFailure:
            return .permanent(reason: failure.reason)
        case let kafka as KafkaError:
            return kafka.isRecordTooLarge ? .permanent(reason: "record_too_large") : .transient
        case is RedisError, is IndexNotReady, is CancellationError, is RegistryUnavailable:
            return .transient
        default:
            // A handler's own error that is neither Kafka's nor Redis's comes from the input.
            return .permanent(reason: "processing_failed")
        }
    }
}
