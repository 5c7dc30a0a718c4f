import Foundation
import HeraldDomain
import NIOCore
import NIOHPACK

/// What one attempt to hand a delivery to its push service came to.
public enum PushAttempt: Sendable, Hashable {
    /// The service answered.
    case answered(PushAnswer)
    /// No answer: the connection failed or was lost, or the request timed out. Retried.
    case lost(reason: String)
    /// Herald could not make a request of this delivery (its payload is not what the service
    /// takes); nothing was sent, and no retry can help.
    case unsendable(reason: String)
}

/// One provider's client (an APNs team, an FCM project).
public protocol PushTransport: Sendable {
    /// Sends one request for each of `deliveries` at once; the futures of the attempts, in
    /// order. Never fails: every failure is an attempt's outcome.
    func submit(_ deliveries: [DeliveryRecord]) async -> [EventLoopFuture<PushAttempt>]
    /// What the sender does with an answer of this service.
    func verdict(_ answer: PushAnswer) -> PushVerdict
    /// Requests in flight now.
    var inFlight: Int { get }
    func shutdown() async
}

extension PushTransport {
    /// One request for `delivery`.
    public func send(_ delivery: DeliveryRecord) async -> PushAttempt {
        guard let future = await submit([delivery]).first else { return .lost(reason: "nothing was sent") }
        return (try? await future.get()) ?? .lost(reason: "connection: no answer")
    }

    /// The attempts of `requests` on `connections`, read by `read`; failures become `.lost`.
    static func attempts(
        on connections: PushConnections, _ requests: [PushRequest], read: @escaping @Sendable (PushResponse) -> PushAnswer
    ) async -> [EventLoopFuture<PushAttempt>] {
        await connections.submit(requests).map { future in
            future.map { PushAttempt.answered(read($0)) }.recover { error in
                .lost(reason: (error as? HTTP2PushError)?.description ?? "connection: \(error)")
            }
        }
    }

    /// `Retry-After` in seconds (the HTTP-date form is read too).
    static func retryAfter(_ headers: HPACKHeaders, now: Date = Date()) -> TimeInterval? {
        guard let text = headers.first(name: "retry-after")?.trimmingCharacters(in: .whitespaces) else { return nil }
        if let seconds = TimeInterval(text) { return max(0, seconds) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: text).map { max(0, $0.timeIntervalSince(now)) }
    }
}
