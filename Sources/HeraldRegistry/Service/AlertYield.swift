import Foundation
import HeraldRedis
import Synchronization

/// Registration writes step aside while a breaking alert fans out anywhere in the deployment.
///
/// An express lane running a breaking alert's tasks holds a field of `SlotLayout.breakingKey`
/// (a hash: lane -> when its signal ends, in milliseconds since 1970), renewed while the work
/// lasts and cut short when it is done. A write of a registration or an installation
/// (`RegistrationService`) and a batch of the indexer wait while a signal lasts, at most
/// `limit` each, before they touch Redis or Kafka: where an alert shares the cores,
/// Redis's one thread and the broker with a flood of registration writes, the flood pauses and
/// the alert does not queue behind it. Registrations are not urgent; a reader's lock screen is.
///
/// A process reads the key at most once per `checkEvery`, however many writes wait, and a
/// Redis failure never holds a write back (the write itself then says what failed).
public final class AlertYield: Sendable {
    public let key: String
    /// The longest one write waits; zero: writes never wait.
    public let limit: Duration
    let checkEvery: Duration
    private let pool: RedisConnectionPool
    private let state = Mutex(State())

    private struct State {
        var checkedAt: ContinuousClock.Instant?
        var breaking = false
        var waited = 0
    }

    public init(pool: RedisConnectionPool, key: String, limit: Duration, checkEvery: Duration = .milliseconds(50)) {
        self.pool = pool
        self.key = key
        self.limit = limit
        self.checkEvery = checkEvery
    }

    /// The yield of the registrations in `index`'s deployment, waiting at most
    /// `configuration.alertYieldSeconds`.
    public convenience init(index: RegistrationIndex, configuration: RegistryConfiguration) {
        self.init(pool: index.pool, key: index.layout.breakingKey, limit: .seconds(max(0, configuration.alertYieldSeconds)))
    }

    /// Writes that found a breaking alert in flight and waited (tests and diagnostics).
    public var writesThatWaited: Int { state.withLock { $0.waited } }

    /// Returns at once when no breaking alert is in flight; otherwise once none is, or after
    /// `limit`, or when the task is cancelled. Returns how long it waited.
    @discardableResult
    public func waitWhileBreaking() async -> Duration {
        guard limit > .zero else { return .zero }
        let start = ContinuousClock.now
        var counted = false
        while await isBreaking() {
            if !counted {
                counted = true
                state.withLock { $0.waited += 1 }
            }
            let waited = start.duration(to: .now)
            guard waited < limit else { break }
            do { try await Task.sleep(for: min(checkEvery, limit - waited)) } catch { break }
        }
        return start.duration(to: .now)
    }

    /// Whether a signal lasts, read again once `checkEvery` has passed since the last read.
    func isBreaking() async -> Bool {
        let now = ContinuousClock.now
        let cached = state.withLock { state -> Bool? in
            guard let at = state.checkedAt, at.duration(to: now) < checkEvery else { return nil }
            return state.breaking
        }
        if let cached { return cached }
        let reply = try? await pool.withConnection { try await $0.send(RedisCommand("HVALS", key)) }
        let nowMilliseconds = Int64(Date().timeIntervalSince1970 * 1_000)
        let breaking = (reply?.array ?? []).contains { ($0.string.flatMap { Int64($0) } ?? 0) > nowMilliseconds }
        state.withLock { state in
            state.checkedAt = now
            state.breaking = breaking
        }
        return breaking
    }
}
