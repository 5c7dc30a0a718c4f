import Foundation
import HeraldDomain

/// Cancelling an event, as `DELETE /v1/notifications/{id}` (and the Azure route) and
/// `herald cancel` do it: what is left of a schedule is cancelled, a fan-out in progress is
/// stopped, and a completed fan-out whose deliveries the sender has not all answered, or whose
/// devices held for their quiet hours are not all released, has the rest cancelled. Refusals are `APIError`s: 404 for an unknown event, 409 `not_cancellable`
/// for one with nothing left to cancel, 503 when the status store does not answer.
public struct EventCancellation: Sendable {
    public enum Outcome: Sendable, Hashable {
        /// The status is `cancelled` (now, or it was already).
        case cancelled
        /// Asked; the scheduler or the fan-out had not acted within `wait`: the status is the
        /// latest one (`scheduled`, `accepted` or `processing`).
        case pending
        /// The fan-out had completed: the sender gives the deliveries it has not sent the
        /// receipt `cancelled`, and the releases of devices it held for their quiet hours deliver
        /// nothing (their statuses say `cancelled`); the status stays `completed`.
        case stoppingSends
    }

    let statusReader: any NotificationStatusReading
    let scheduler: any NotificationScheduling
    /// How long to wait for the scheduler or the fan-out to act.
    let wait: Duration

    public init(statusReader: any NotificationStatusReading, scheduler: any NotificationScheduling, wait: Duration = .seconds(5)) {
        self.statusReader = statusReader
        self.scheduler = scheduler
        self.wait = wait
    }

    public func cancel(eventId id: String, hub: HubName) async throws -> (StatusRecord, Outcome) {
        guard let current = try await statusReader.storedStatus(id, hub: hub) else {
            throw APIError.notFound("a status for event \"\(id)\" (it may not have been planned yet)")
        }
        switch current.state {
        case .cancelled:
            return (current, .cancelled)
        case .scheduled:
            try await scheduler.requestCancel(eventId: id, hub: hub)
        case .accepted, .processing:
            try await scheduler.requestStop(eventId: id, hub: hub)
        case .completed:
            // While a sender is at it (with no receipt counted yet, no sender may run at all), or
            // while devices it held for their quiet hours may still be released.
            let sending = current.push != nil && current.pushReceiptCount < current.targets.total
            let holding =
                (current.skippedReasons?["held_quiet"] ?? 0) > 0
                && Date().timeIntervalSince(current.timings.completedAt ?? .distantPast) < QuietRelease.longestHold
            guard sending || holding else { throw Self.tooLate(current) }
            try await scheduler.requestStop(eventId: id, hub: hub)
            return (current, .stoppingSends)
        case .released, .expired, .rejected:
            throw Self.tooLate(current)
        }
        let deadline = ContinuousClock.now + wait
        var latest = current
        while ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
            guard let record = try await statusReader.storedStatus(id, hub: hub) else { continue }
            latest = record
            switch record.state {
            case .cancelled: return (record, .cancelled)
            case .scheduled, .accepted, .processing: continue
            default: throw Self.tooLate(record)
            }
        }
        return (latest, .pending)
    }

    /// 409 for an event with nothing left to cancel, saying what became of it.
    static func tooLate(_ record: StatusRecord) -> APIError {
        APIError.conflict(
            "not_cancellable",
            "event \"\(record.eventId)\" is \(record.state.rawValue): there is nothing left to cancel; a scheduled event, one still being fanned out, one whose deliveries are not all sent, or one holding devices for their quiet hours can be cancelled"
        )
    }
}

extension NotificationStatusReading {
    /// The event's status; a status store that does not answer (Redis down) is a 503 the client
    /// may retry.
    func storedStatus(_ id: String, hub: HubName) async throws -> StatusRecord? {
        do {
            return try await status(eventId: id, hub: hub)
        } catch {
            throw APIError(
                status: .serviceUnavailable, code: "unavailable", message: "the status store does not answer; retry later",
                headers: [.retryAfter: "1"])
        }
    }
}
