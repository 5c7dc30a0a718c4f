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
    /// Sends one request for `delivery`; never throws, every failure is an attempt's outcome.
    func send(_ delivery: DeliveryRecord) async -> PushAttempt
    /// What the sender does with an answer of this service.
    func verdict(_ answer: PushAnswer) -> PushVerdict
    /// Requests in flight now.
    var inFlight: Int { get }
    func shutdown() async
}

extension PushTransport {
    /// `request` on one of `connections`, with the failures every service shares.
    static func attempt(
        on connections: PushConnections, _ request: PushRequest, read: (PushResponse) -> PushAnswer
    ) async -> PushAttempt {
        do {
            guard let response = try await connections.send(request) else {
                return .lost(reason: "cancelled while waiting for a connection")
            }
            return .answered(read(response))
        } catch let error as HTTP2PushError {
            return .lost(reason: error.description)
        } catch {
            return .lost(reason: "connection: \(error)")
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
