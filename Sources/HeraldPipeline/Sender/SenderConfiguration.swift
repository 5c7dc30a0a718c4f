import Foundation
import HeraldDomain

/// Settings of the sender role (`herald worker --roles sender`).
public struct SenderConfiguration: Sendable {
    /// Consumer group on `herald.deliveries`.
    public var group: String = "herald-sender"
    /// Deliveries per transaction (receipts and offsets committed together). Each batch pays
    /// about 20 ms with nothing in flight (the drain of its last requests, the receipts, the
    /// commit, the next poll): a sixth of a 2,000-delivery batch at push speed.
    public var batchSize: Int = 5_000
    /// Attempts, backoff and the longest `Retry-After` honoured. The defaults keep a batch's
    /// worst case (5 timed-out attempts and 4 pauses) under `transactionTimeoutMs`.
    public var retry = PushRetryPolicy(maxAttempts: 5, baseDelay: 0.5, maxDelay: 8, maxRetryAfter: 15)
    /// The sender's transactions may stay open while a batch's retries wait; the broker
    /// aborts one open longer than this (the batch is then done again, its sent-markers
    /// keeping what was sent from being sent twice).
    public var transactionTimeoutMs: Int = 120_000
    /// How long a sent-marker outlives a sender that died before committing its receipt.
    public var markerTTLSeconds: Int = 86_400

    public init() {}
}
