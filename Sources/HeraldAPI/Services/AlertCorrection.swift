import Foundation
import HeraldDomain

/// Correcting an event already sent, as `POST /v1/notifications/{id}/corrections` and
/// `herald correct` do it: the original is read back from the event log (where its claim says it
/// is), the new text laid over it (`CorrectionRequest`), and the correction published; the
/// planner sends it to the devices the original reached. Refusals are `APIError`s: 404 for an
/// unknown event, 409 `not_correctable` for one whose fan-out has not completed (or that is a
/// test send, a rehearsal or a correction), 503 when the log cannot give the original back.
public struct AlertCorrection: Sendable {
    let statusReader: any NotificationStatusReading
    let archive: any EventArchive
    let publisher: any NotificationPublishing

    public init(statusReader: any NotificationStatusReading, archive: any EventArchive, publisher: any NotificationPublishing) {
        self.statusReader = statusReader
        self.archive = archive
        self.publisher = publisher
    }

    /// Publishes the correction and returns its id (`<id>~correction-<partition>-<offset>`).
    public func correct(eventId id: String, hub: HubName, request: CorrectionRequest, caller: String?, now: Date) async throws -> String {
        if DerivedSend.parse(id) != nil {
            throw APIError.conflict(
                "not_correctable", "\"\(id)\" is a test send, a rehearsal or a correction; correct the event it was made from")
        }
        guard let status = try await statusReader.storedStatus(id, hub: hub) else {
            throw APIError.notFound("a status for event \"\(id)\" (it may not have been planned yet, or its status expired)")
        }
        guard status.state == .completed else {
            throw APIError.conflict(
                "not_correctable",
                "event \"\(id)\" is \(status.state.rawValue): only an event whose fan-out completed can be corrected (stop one in flight with DELETE, then send anew)"
            )
        }
        let original: NotificationEvent?
        do {
            original = try await archive.event(eventId: id, hub: hub)
        } catch {
            throw APIError.unavailable("the event log does not give event \"\(id)\" back: \(error); retry later", retryAfter: 5)
        }
        guard var original else {
            throw APIError.conflict(
                "not_correctable", "event \"\(id)\" is no longer in the event log (its retention passed), so its text cannot be corrected")
        }
        original.id = id
        let correction = request.correction(of: original, caller: caller, now: now)
        return try await publisher.publish(correction, body: correction.canonicalJSON())
    }
}
