import Foundation
import HeraldDomain

/// Settings of the sender role (`herald worker --roles sender`).
public struct SenderConfiguration: Sendable {
    /// Consumer group on `herald.deliveries`.
    public var group: String = "herald-sender"
    /// Deliveries per transaction (receipts and offsets committed together). Each batch pays
    /// about 50 ms without requests of its own in flight (decoding, the sent-markers read, the
    /// drain of its last requests, the counts, the commit, the next poll), which the other
    /// loops' batches fill (`loops`).
    public var batchSize: Int = 2_500
    /// Batches in hand at once, each in its own transaction (a consumer of the group and a
    /// transactional producer each), sharing the connections: while one commits and polls,
    /// the other's requests keep the connections busy. One loop of 5,000-delivery batches left
    /// them idle for a sixth of the time; two loops of 2,500 push a tenth more with less
    /// memory; three pushed less (docs/performance.md, "The sender").
    public var loops: Int = 2
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
