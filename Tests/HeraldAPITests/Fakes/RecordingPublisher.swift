import HeraldAPI
import HeraldDomain
import Synchronization

/// Keeps what would have gone to `herald.events`.
final class RecordingPublisher: NotificationPublishing, Sendable {
    let published = Mutex<[(event: NotificationEvent, body: [UInt8])]>([])

    var count: Int { published.withLock { $0.count } }
    var last: (event: NotificationEvent, body: [UInt8])? { published.withLock { $0.last } }

    func publish(_ event: NotificationEvent, body: [UInt8]) async throws -> String {
        published.withLock { $0.append((event, body)) }
        return event.id!
    }
}

/// Answers status queries from a fixed table.
struct FixedStatusReader: NotificationStatusReading {
    var records: [String: StatusRecord] = [:]
    /// Thrown by every read when set, as a store that is down would.
    var failure: (any Error & Sendable)?

    func status(eventId: String) async throws -> StatusRecord? {
        if let failure { throw failure }
        return records[eventId]
    }
}
