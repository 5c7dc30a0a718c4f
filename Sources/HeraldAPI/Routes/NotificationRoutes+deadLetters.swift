import Foundation
import HTTPTypes
import HeraldDomain
import Hummingbird

/// The events the planner refused (`herald.events.dlq`), for the console and operators: listed
/// with their reasons, and replayed once fixed upstream (or when the refusal was the
/// deployment's, such as a hub created too late): validated again exactly as a send and
/// published under their id.
extension NotificationRoutes {
    func addDeadLetters(to group: RouterGroup<APIRequestContext>) {
        group.get("deadletters", use: deadLetterList)
        group.post("deadletters/{partition}/{offset}/replay", use: replayDeadLetter)
    }

    /// `GET /v1/deadletters?limit=` (Manage): the hub's dead letters, newest first.
    @Sendable func deadLetterList(_ request: Request, context: APIRequestContext) async throws -> Response {
        try context.requireCaller().authorize(.manageDeadLetters)
        let hub = try RequestReading.hub(of: context)
        let store = try requireDeadLetters()
        let limit = try RequestReading.limit(request, defaultValue: 50, maximum: Self.recentLimit)
        let entries: [DeadLetterEntry]
        do {
            entries = try await store.deadLetters(hub: hub, limit: limit)
        } catch {
            throw APIError.unavailable("the dead-letter topic cannot be read; retry later")
        }
        return .json(.object([JSONMember(key: "deadLetters", value: .array(entries.map { $0.json() }))]))
    }

    /// `POST /v1/deadletters/{partition}/{offset}/replay` (Manage): the original event,
    /// validated and published again exactly as `POST /v1/notifications` would (202 with its
    /// id and location); 400 with every issue when it is still not valid; 409
    /// `not_replayable` when only its first bytes were kept or it was not an event.
    @Sendable func replayDeadLetter(_ request: Request, context: APIRequestContext) async throws -> Response {
        try context.requireCaller().authorize(.manageDeadLetters)
        let hub = try RequestReading.hub(of: context)
        let store = try requireDeadLetters()
        let partitionText = try RequestReading.parameter("partition", of: context)
        let offsetText = try RequestReading.parameter("offset", of: context)
        guard let partition = Int32(partitionText), partition >= 0 else {
            throw APIError.invalidParameter("partition", "a partition is a whole number from 0; got \"\(partitionText)\"")
        }
        guard let offset = Int64(offsetText), offset >= 0 else {
            throw APIError.invalidParameter("offset", "an offset is a whole number from 0; got \"\(offsetText)\"")
        }
        guard let entry = try await store.deadLetter(partition: partition, offset: offset, hub: hub) else {
            throw APIError.notFound("a dead letter at partition \(partition), offset \(offset) in hub \"\(hub)\"")
        }
        guard entry.sourceTopic == store.eventsTopic else {
            throw Self.notReplayable("it came from \(entry.sourceTopic), not from \(store.eventsTopic); publish the event anew")
        }
        guard let original = entry.original, !entry.truncated else {
            throw Self.notReplayable("only the first bytes of the original were kept; publish a corrected event anew")
        }
        var event = try NotificationEvent.decode(original, limits: EventLimits(payloadLimits: limits.registration.payloadLimits))
        let (id, _) = try await accept(&event, hub: hub)
        let location = try RequestReading.hubPath(of: context) + "/notifications/\(id)"
        return .json(
            .object([
                JSONMember(key: "id", value: .string(id)), JSONMember(key: "location", value: .string(location)),
                JSONMember(
                    key: "replayedFrom",
                    value: .object([
                        JSONMember(key: "partition", value: .number(String(partition))),
                        JSONMember(key: "offset", value: .number(String(offset))),
                    ])),
            ]), status: .accepted, headers: [.location: location])
    }

    private func requireDeadLetters() throws -> any DeadLetterStore {
        guard let deadLetters else { throw APIError.unavailable("dead letters are not configured on this API") }
        return deadLetters
    }

    private static func notReplayable(_ why: String) -> APIError {
        .conflict("not_replayable", "this dead letter cannot be replayed: \(why)")
    }
}
