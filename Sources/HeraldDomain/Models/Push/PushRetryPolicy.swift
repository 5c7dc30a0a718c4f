import Foundation

/// When a delivery is tried again, and when the sender gives up on it.
///
/// Exponential backoff with full jitter (a random pause between 0 and `baseDelay * 2^(n-1)`,
/// capped at `maxDelay`), never sooner than the service's `Retry-After`; at most
/// `maxAttempts` requests; and never past the delivery's `expiresAt`, so a record never
/// holds its partition longer than its own lifetime or the attempts allow.
public struct PushRetryPolicy: Sendable, Hashable {
    public var maxAttempts: Int
    public var baseDelay: TimeInterval
    public var maxDelay: TimeInterval
    /// The longest `Retry-After` honoured; a longer one gives up (`failed`) rather than wait.
    public var maxRetryAfter: TimeInterval

    public init(maxAttempts: Int = 5, baseDelay: TimeInterval = 0.5, maxDelay: TimeInterval = 30, maxRetryAfter: TimeInterval = 300) {
        self.maxAttempts = max(1, maxAttempts)
        self.baseDelay = max(0, baseDelay)
        self.maxDelay = max(self.baseDelay, maxDelay)
        self.maxRetryAfter = maxRetryAfter
    }

    /// What follows a failed attempt.
    public enum Next: Sendable, Hashable {
        /// Try again at this instant.
        case retry(at: Date)
        /// Stop: the receipt's outcome and reason.
        case giveUp(PushOutcome, reason: String)
    }

    /// The pause after attempt `attempt` (1 for the first) failed; `unit` is a random number
    /// in 0..<1 (the jitter), passed in so that tests choose it.
    public func delay(afterAttempt attempt: Int, retryAfter: TimeInterval?, unit: Double) -> TimeInterval {
        let exponent = Double(min(max(attempt, 1) - 1, 30))
        let ceiling = min(maxDelay, baseDelay * pow(2, exponent))
        let jittered = ceiling * min(max(unit, 0), 1)
        return max(jittered, retryAfter ?? 0)
    }

    /// After attempt `attempt` failed with a retryable `reason` at `now`: when to try again,
    /// or the receipt's outcome when the attempts are spent, the service asks for a longer
    /// pause than `maxRetryAfter`, or the next attempt would come after `expiresAt`.
    public func next(
        afterAttempt attempt: Int, reason: String, retryAfter: TimeInterval?, now: Date, expiresAt: Date?, unit: Double
    ) -> Next {
        guard attempt < maxAttempts else {
            return .giveUp(.failed, reason: "\(reason) (after \(attempt) attempt\(attempt == 1 ? "" : "s"))")
        }
        if let retryAfter, retryAfter > maxRetryAfter {
            return .giveUp(.failed, reason: "\(reason) (the service asked to wait \(Int(retryAfter)) s, more than \(Int(maxRetryAfter)) s)")
        }
        let at = now.addingTimeInterval(delay(afterAttempt: attempt, retryAfter: retryAfter, unit: unit))
        if let expiresAt, at >= expiresAt {
            return .giveUp(.expired, reason: "\(reason); expires at \(ISO8601Timestamp.format(expiresAt)) before the next attempt")
        }
        return .retry(at: at)
    }
}
