/// Herald's record sizes, end to end, chosen so every record Herald writes fits Kafka's
/// defaults with room to spare (see docs/topics.md, "Record sizes"):
///
/// - an event is at most `maxEventBytes`, and the API refuses larger notification bodies;
/// - a fan-out task carries its event re-encoded, at most about twice its size;
/// - a registration or installation document is at most `maxDocumentBytes`;
/// - a delivery record carries one payload bounded by its platform's `PayloadLimits`;
/// - a dead letter keeps at most `DeadLetter.maxInlineOriginalBytes` of its original.
///
/// All of them stay under `maxRecordBytes`, the producers' `message.max.bytes`, which is under
/// the topics' `max.message.bytes` (`topicMaxMessageBytes`, Apache Kafka's default).
public enum RecordSizes {
    /// The producers' `message.max.bytes` (librdkafka's default).
    public static let maxRecordBytes = 1_000_000
    /// `max.message.bytes` of every topic `herald topics create` makes (Kafka's default).
    public static let topicMaxMessageBytes = 1_048_588
    /// Largest event on `herald.events` and body of `POST /v1/notifications`.
    public static let maxEventBytes = 262_144
    /// Largest registration or installation document, and API request body.
    public static let maxDocumentBytes = 524_288
}
