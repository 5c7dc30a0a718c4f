import Foundation
import HTTPTypes
import HeraldDomain
import Hummingbird
import NIOCore

/// Publishing over HTTP: the event is validated exactly as the planner would (so a bad
/// event is refused here with every issue instead of landing in the DLQ), given an id and
/// a publish time when it has none, and put on `herald.events`.
struct NotificationRoutes: Sendable {
    let publisher: any NotificationPublishing
    let statusReader: any NotificationStatusReading
    let limits: APILimits
    let now: @Sendable () -> Date

    func add(to group: RouterGroup<APIRequestContext>) {
        group.post("notifications", use: publish)
        group.get("notifications/{id}", use: status)
    }

    /// `POST /v1/notifications`: 202 `{"id": ...}` with `Location: /v1/notifications/{id}`.
    @Sendable func publish(_ request: Request, context: APIRequestContext) async throws -> Response {
        try context.requireCaller().authorize(.publish)
        let bytes = try await RequestReading.body(of: request, limit: limits.maxRequestBytes)
        var event = try NotificationEvent.decode(bytes, limits: EventLimits(payloadLimits: limits.registration.payloadLimits))
        if event.id == nil { event.id = Self.newEventId() }
        if event.publishedAt == nil { event.publishedAt = now() }
        let id = try await publisher.publish(event, body: event.canonicalJSON())
        let location = "/v1/notifications/\(id)"
        return .json(
            .object([JSONMember(key: "id", value: .string(id)), JSONMember(key: "location", value: .string(location))]),
            status: .accepted, headers: [.location: location]
        )
    }

    /// `GET /v1/notifications/{id}`: the latest status record, or 404.
    @Sendable func status(_ request: Request, context: APIRequestContext) async throws -> Response {
        try context.requireCaller().authorize(.readNotificationStatus)
        let id = try RequestReading.parameter("id", of: context)
        if let problem = IdentifierRules.eventIdProblem(id) { throw APIError.invalidParameter("id", problem) }
        let stored: StatusRecord?
        do {
            stored = try await statusReader.status(eventId: id)
        } catch {
            // The status store (Redis) is down or unreadable: a 503 the client may retry.
            throw APIError(
                status: .serviceUnavailable, code: "unavailable",
                message: "the status store does not answer; retry later", headers: [.retryAfter: "1"]
            )
        }
        guard let record = stored else {
            throw APIError.notFound("a status for event \"\(id)\" (it may not have been planned yet)")
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var data = try encoder.encode(record)
        data.append(UInt8(ascii: "\n"))
        return Response(
            status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: data))
        )
    }

    /// `ev-` and a random UUID: unique without coordination and valid as an event id.
    static func newEventId() -> String {
        "ev-" + UUID().uuidString.lowercased()
    }
}
