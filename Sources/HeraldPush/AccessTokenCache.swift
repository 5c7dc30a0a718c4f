import Foundation

/// An OAuth 2.0 access token kept between requests: fetched by `exchange` when there is none
/// or it expires within `renewBefore` (5 minutes), dropped when the service refused it.
/// Concurrent requests share one exchange. FCM's and WNS's tokens both live in one.
public actor AccessTokenCache {
    public typealias Exchange = @Sendable (Date) async throws -> (token: String, expiresAt: Date)

    private let exchange: Exchange
    private let renewBefore: TimeInterval
    private var current: (token: String, expiresAt: Date)?
    private var pending: Task<(token: String, expiresAt: Date), any Error>?
    /// Exchanges made so far (tests, metrics).
    public private(set) var exchanges = 0

    public init(renewBefore: TimeInterval = 300, exchange: @escaping Exchange) {
        self.renewBefore = renewBefore
        self.exchange = exchange
    }

    /// The access token to send now.
    public func token(now: Date = Date()) async throws -> String {
        if let current, current.expiresAt.timeIntervalSince(now) > renewBefore { return current.token }
        if let pending { return try await pending.value.token }
        exchanges += 1
        let task = Task { [exchange] in try await exchange(now) }
        pending = task
        defer { pending = nil }
        let fetched = try await task.value
        current = fetched
        return fetched.token
    }

    /// The service refused `token` (401): the next request exchanges again.
    public func refused(_ token: String) {
        if current?.token == token { current = nil }
    }
}
