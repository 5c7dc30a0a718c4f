import Foundation
import HTTPTypes
import HeraldDomain
import Hummingbird
import NIOCore

/// How `GET /v1/notifications/{id}/live` follows an event: how often it reads the event's
/// status and reach, how often it sends a keep-alive comment when nothing changed, and when it
/// ends the stream.
public struct LiveWatch: Sendable {
    /// Between two reads of the status and the reach.
    public var every: Duration = .milliseconds(500)
    /// A comment line when nothing was sent for this long, so proxies keep the stream open.
    public var keepAlive: Duration = .seconds(15)
    /// A final event (`completed`, `cancelled`, …) whose receipts are still short of its
    /// deliveries ends the stream once nothing changed for this long (no sender runs, or it
    /// has given up on them).
    public var quietEnd: Duration = .seconds(120)
    /// The longest a stream lasts; the client opens a new one if it still watches.
    public var longest: Duration = .seconds(3_600)

    public init() {}
}

/// Watching alerts, for the console's list and alert page: the hub's recent events, an
/// event's reach over time, and both followed live as Server-Sent Events.
extension NotificationRoutes {
    func addWatching(to group: RouterGroup<APIRequestContext>) {
        group.get("notifications/{id}/reach", use: reach)
        group.get("notifications/{id}/live", use: live)
    }

    /// `GET /v1/notifications?state=recent&limit=` (Send, Manage): the hub's most recent events
    /// (rehearsals left out), newest first, each summed up from its status.
    func recent(_ request: Request, context: APIRequestContext) async throws -> Response {
        try context.requireCaller().authorize(.readNotificationStatus)
        let hub = try RequestReading.hub(of: context)
        let limit = try RequestReading.limit(request, defaultValue: 50, maximum: Self.recentLimit)
        let records: [StatusRecord]
        do {
            records = try await statusReader.recent(hub: hub, limit: limit)
        } catch {
            throw APIError.unavailable("the status store does not answer; retry later")
        }
        return .json(.object([JSONMember(key: "notifications", value: .array(records.map(Self.summary)))]))
    }

    /// The most recent events one request lists.
    static let recentLimit = 200

    /// `GET /v1/notifications/{id}/reach` (Send, Manage): the event's deliveries committed, sent
    /// and opened over time (`ReachSeries`), as `[milliseconds from the publish, count so far]`.
    @Sendable func reach(_ request: Request, context: APIRequestContext) async throws -> Response {
        try context.requireCaller().authorize(.readNotificationStatus)
        let hub = try RequestReading.hub(of: context)
        let id = try eventId(context)
        guard let record = try await storedStatus(id, hub: hub), let series = try await storedReachSeries(id, hub: hub) else {
            throw APIError.notFound("a status for event \"\(id)\" (it may not have been planned yet)")
        }
        return .json(Self.reachDocument(record, series: series))
    }

    /// The event's reach over time; a store that does not answer is a 503 to retry.
    func storedReachSeries(_ id: String, hub: HubName) async throws -> ReachSeries? {
        do {
            return try await statusReader.reachSeries(eventId: id, hub: hub)
        } catch {
            throw APIError.unavailable("the status store does not answer; retry later")
        }
    }

    /// `GET /v1/notifications/{id}/live` (Send, Manage): Server-Sent Events, an `update` with
    /// `{"status": …, "reach": …}` at once and whenever either changes, a comment line as a
    /// keep-alive, and `end` once the event is final and every delivery has its receipt (or
    /// nothing changed for `LiveWatch.quietEnd` after it was final, or after
    /// `LiveWatch.longest`). The console reads it with `fetch`, which can send the
    /// `Authorization` header that `EventSource` cannot.
    @Sendable func live(_ request: Request, context: APIRequestContext) async throws -> Response {
        try context.requireCaller().authorize(.readNotificationStatus)
        let hub = try RequestReading.hub(of: context)
        let id = try eventId(context)
        guard let first = try await liveUpdate(id, hub: hub) else {
            throw APIError.notFound("a status for event \"\(id)\" (it may not have been planned yet)")
        }
        let routes = self
        let watch = liveWatch
        let body = ResponseBody { writer in
            let started = ContinuousClock.now
            var update = first
            var sent: [UInt8] = []
            var lastWrite = started
            var lastChange = started
            while true {
                let now = ContinuousClock.now
                if update.bytes != sent {
                    try await writer.write(Self.serverSentEvent("update", data: update.bytes))
                    sent = update.bytes
                    lastWrite = now
                    lastChange = now
                } else if lastWrite.duration(to: now) >= watch.keepAlive {
                    try await writer.write(ByteBuffer(string: ": keep-alive\n\n"))
                    lastWrite = now
                }
                let settled = update.isFinal && (update.isFullySent || lastChange.duration(to: now) >= watch.quietEnd)
                if settled || started.duration(to: now) >= watch.longest { break }
                try await Task.sleep(for: watch.every)
                // A read that fails (Redis away for a moment) keeps the last update.
                if let next = try? await routes.liveUpdate(id, hub: hub) { update = next }
            }
            try await writer.write(Self.serverSentEvent("end", data: Array("{}".utf8)))
            try await writer.finish(nil)
        }
        return Response(
            status: .ok,
            headers: [
                .contentType: "text/event-stream; charset=utf-8", .cacheControl: "no-store", HTTPField.Name("X-Accel-Buffering")!: "no",
            ],
            body: body)
    }

    /// What one read of a watched event found.
    struct LiveUpdate: Sendable {
        var bytes: [UInt8]
        var isFinal: Bool
        var isFullySent: Bool
    }

    /// The event's status and reach as one `update` (nil when no status is known).
    func liveUpdate(_ id: String, hub: HubName) async throws -> LiveUpdate? {
        guard let record = try await storedStatus(id, hub: hub) else { return nil }
        let series = try await storedReachSeries(id, hub: hub) ?? ReachSeries()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var bytes = Array("{\"status\":".utf8)
        bytes += try encoder.encode(record)
        bytes += Array(",\"reach\":".utf8)
        Self.reachDocument(record, series: series).write(into: &bytes)
        bytes.append(UInt8(ascii: "}"))
        return LiveUpdate(bytes: bytes, isFinal: record.state.isTerminal, isFullySent: record.pushReceiptCount >= record.targets.total)
    }

    /// One Server-Sent Event: its name and one line of JSON.
    static func serverSentEvent(_ name: String, data: [UInt8]) -> ByteBuffer {
        var buffer = ByteBuffer(string: "event: \(name)\ndata: ")
        buffer.writeBytes(data)
        buffer.writeString("\n\n")
        return buffer
    }

    /// `{"eventId", "publishedAt", "targets", "committed", "sent", "opened"}`, each stage as
    /// `[[milliseconds from the publish, count so far], …]`.
    static func reachDocument(_ record: StatusRecord, series: ReachSeries) -> JSONValue {
        let points = { (points: [ReachSeries.Point]) -> JSONValue in
            .array(points.map { .array([.number(String($0.elapsedMs)), .number(String($0.count))]) })
        }
        let start = record.timings.publishedAt ?? record.timings.acceptedAt
        return .object([
            JSONMember(key: "eventId", value: .string(record.eventId)),
            JSONMember(key: "publishedAt", value: .string(ISO8601Timestamp.format(start, precision: .milliseconds))),
            JSONMember(key: "targets", value: .number(String(record.targets.total))),
            JSONMember(key: "committed", value: points(series.committed)),
            JSONMember(key: "sent", value: points(series.sent)),
            JSONMember(key: "opened", value: points(series.opened)),
        ])
    }

    /// One line of the list of recent events.
    static func summary(_ record: StatusRecord) -> JSONValue {
        var members = [
            JSONMember(key: "id", value: .string(record.eventId)),
            JSONMember(key: "state", value: .string(record.state.rawValue)),
            JSONMember(
                key: "publishedAt",
                value: .string(ISO8601Timestamp.format(record.timings.publishedAt ?? record.timings.acceptedAt, precision: .milliseconds))),
            JSONMember(key: "targets", value: .number(String(record.targets.total))),
            JSONMember(key: "sent", value: .number(String(record.push?.values.reduce(0) { $0 + ($1["sent"] ?? 0) } ?? 0))),
            JSONMember(key: "skipped", value: .number(String(record.skipped))),
            JSONMember(key: "failed", value: .number(String(record.failed))),
            JSONMember(key: "test", value: .bool(record.isTest)),
            JSONMember(key: "correctionOf", value: record.correctionOf.map { .string($0) } ?? .null),
        ]
        if let reason = record.reason { members.append(JSONMember(key: "reason", value: .string(reason))) }
        return .object(members)
    }
}
