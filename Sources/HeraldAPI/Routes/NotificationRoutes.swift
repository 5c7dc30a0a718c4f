import Foundation
import HTTPTypes
import HeraldDomain
import Hummingbird
import NIOCore

/// Publishing over HTTP: the event is validated exactly as the planner would (so a bad
/// event is refused here with every issue instead of landing in the DLQ), given an id and
/// a publish time when it has none, and put on `herald.events`. A scheduled event
/// (`sendAt`, `sendAtLocal`) is judged against the schedule rules here too, and can be
/// cancelled and listed.
struct NotificationRoutes: Sendable {
    let publisher: any NotificationPublishing
    let statusReader: any NotificationStatusReading
    let scheduler: (any NotificationScheduling)?
    let hubs: any HubStore
    let sendQuota: (any SendQuota)?
    let limits: APILimits
    let scheduleRules: ScheduleRules
    let now: @Sendable () -> Date
    /// How long `DELETE` waits for the scheduler to act before answering 202.
    var cancelWait: Duration = .seconds(5)
    /// How long a rehearsal (`?dryRun=true`) is waited for before answering 202.
    var rehearsalWait: Duration = .seconds(5)
    /// How `GET /v1/notifications/{id}/live` follows an event.
    var liveWatch = LiveWatch()
    /// Gives the original back for a correction; nil: corrections answer 503.
    var archive: (any EventArchive)? = nil
    /// Keeps readers' engagements; nil: they answer 503.
    var engagements: (any EngagementRecording)? = nil
    /// Looks up the device an engagement names (its platform and template).
    var registry: (any RegistrationStore)? = nil
    /// The events' dead letters; nil: `/v1/deadletters` answers 503.
    var deadLetters: (any DeadLetterStore)? = nil
    /// The default hub's limits (`HERALD_DEFAULT_HUB_LIMITS`).
    var defaultHubLimits = HubLimits()

    func add(to group: RouterGroup<APIRequestContext>) {
        group.post("notifications", use: publish)
        group.get("notifications", use: list)
        group.get("notifications/{id}", use: status)
        group.delete("notifications/{id}", use: cancel)
        group.post("notifications/{id}/corrections", use: correct)
        group.post("notifications/{id}/engagements", use: engage)
        addWatching(to: group)
        addDeadLetters(to: group)
    }

    /// `POST /v1/notifications/{id}/engagements` (Listen, from the app): the device opened or
    /// dismissed the alert. 202 `{"eventId", "action", "counted"}`; `counted` is false when the
    /// device had reported that action already (each device counts once). 404 for an event or a
    /// device the hub does not know.
    @Sendable func engage(_ request: Request, context: APIRequestContext) async throws -> Response {
        try context.requireCaller().authorize(.reportEngagement)
        let hub = try RequestReading.hub(of: context)
        let id = try eventId(context)
        let bytes = try await RequestReading.body(of: request, limit: 4_096)
        var engagement = try Engagement.decodeRequest(bytes, eventId: id, hub: hub, now: now())
        guard let engagements, let registry else { throw APIError.unavailable("engagements are not configured on this API") }
        guard let status = try await storedStatus(id, hub: hub) else {
            throw APIError.notFound("a notification \"\(id)\" in hub \"\(hub)\"")
        }
        let store = registry.store(for: hub)
        do {
            switch engagement.device {
            case .registration(let device):
                guard case .found(let registration) = try await store.registration(id: device) else {
                    throw APIError.notFound("a registration \"\(device)\" in hub \"\(hub)\"")
                }
                engagement.platform = registration.platform
                engagement.template = registration.template?.name
            case .installation(let device):
                guard case .found(let stored) = try await store.installation(id: device) else {
                    throw APIError.notFound("an installation \"\(device)\" in hub \"\(hub)\"")
                }
                engagement.platform = stored.installation.platform
            }
        } catch let error as APIError {
            throw error
        } catch {
            throw APIError.from(error)
        }
        let counted = try await engagements.record(engagement, publishedAt: status.timings.publishedAt ?? status.timings.acceptedAt)
        return .json(
            .object([
                JSONMember(key: "eventId", value: .string(id)), JSONMember(key: "action", value: .string(engagement.action.rawValue)),
                JSONMember(key: "counted", value: .bool(counted)),
            ]), status: .accepted)
    }

    /// `POST /v1/notifications/{id}/corrections` (Send): 202 `{"id": <the correction's id>,
    /// "correctionOf": <id>, "location": ...}`. The new text (or a withdrawal) goes to the devices
    /// the event reached and replaces its alert on them (`AlertCorrection`).
    @Sendable func correct(_ request: Request, context: APIRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        try caller.authorize(.publish)
        let hub = try RequestReading.hub(of: context)
        let id = try eventId(context)
        let bytes = try await RequestReading.body(of: request, limit: limits.maxRequestBytes)
        let body = try CorrectionRequest.decode(bytes, limits: EventLimits(payloadLimits: limits.registration.payloadLimits))
        guard let archive else { throw APIError.unavailable("corrections are not configured on this API (no event log reader)") }
        try await admit(hub, limits: hubLimits(hub))
        let correction = AlertCorrection(statusReader: statusReader, archive: archive, publisher: publisher)
        let correctionId = try await correction.correct(eventId: id, hub: hub, request: body, caller: caller.auditName, now: now())
        let location = try RequestReading.hubPath(of: context) + "/notifications/\(correctionId)"
        return .json(
            .object([
                JSONMember(key: "id", value: .string(correctionId)), JSONMember(key: "correctionOf", value: .string(id)),
                JSONMember(key: "location", value: .string(location)),
            ]), status: .accepted, headers: [.location: location])
    }

    /// `POST /v1/notifications`: 202 `{"id": ...}` with `Location: /v1/notifications/{id}`;
    /// for a scheduled event also `"state": "scheduled"` and its release times.
    @Sendable func publish(_ request: Request, context: APIRequestContext) async throws -> Response {
        try context.requireCaller().authorize(.publish)
        let hub = try RequestReading.hub(of: context)
        let bytes = try await RequestReading.body(of: request, limit: limits.maxRequestBytes)
        var event = try NotificationEvent.decode(bytes, limits: EventLimits(payloadLimits: limits.registration.payloadLimits))
        if try Self.dryRun(request) { return try await rehearse(&event, hub: hub, context: context) }
        let (id, decision) = try await accept(&event, hub: hub)
        let location = try RequestReading.hubPath(of: context) + "/notifications/\(id)"
        var members = [JSONMember(key: "id", value: .string(id)), JSONMember(key: "location", value: .string(location))]
        if let tested = DerivedSend.parse(id)?.eventId {
            // A test send: its own id; the event's id stays free for the real send.
            members.append(JSONMember(key: "test", value: .bool(true)))
            members.append(JSONMember(key: "eventId", value: .string(tested)))
        }
        if case .schedule(let releases) = decision {
            members.append(JSONMember(key: "state", value: .string(StatusRecord.State.scheduled.rawValue)))
            members.append(JSONMember(key: "releases", value: .number(String(releases.count))))
            if let first = releases.first, let last = releases.last {
                members.append(
                    JSONMember(
                        key: "firstReleaseAt", value: .string(ISO8601Timestamp.format(first.releaseAt, precision: .secondsWhenExact))))
                members.append(
                    JSONMember(key: "lastReleaseAt", value: .string(ISO8601Timestamp.format(last.releaseAt, precision: .secondsWhenExact))))
            }
        }
        return .json(.object(members), status: .accepted, headers: [.location: location])
    }

    /// `?dryRun=true`: a rehearsal. `dryRun=false` or no parameter: a send.
    static func dryRun(_ request: Request) throws -> Bool {
        guard let text = request.uri.queryParameters.get("dryRun") else { return false }
        switch text {
        case "true": return true
        case "false": return false
        default: throw APIError.invalidParameter("dryRun", "expected true or false, got \"\(text)\"")
        }
    }

    /// `POST /v1/notifications?dryRun=true`: the event validated exactly as a send, then planned
    /// and resolved against every registration under an id of its own, counted and rendered
    /// once per template, delivered to none. 200 with the rehearsal's status, its previews and
    /// the expected times once it completed within `rehearsalWait`, else 202 with its location.
    func rehearse(_ event: inout NotificationEvent, hub: HubName, context: APIRequestContext) async throws -> Response {
        if event.hub != hub {
            guard event.hub.isDefault else {
                throw APIError.invalidBody(field: "hub", "the body names hub \"\(event.hub)\" but the request is for hub \"\(hub)\"")
            }
            event.hub = hub
        }
        if event.testRecipients != nil {
            throw APIError.invalidBody(
                field: "testRecipients", "a rehearsal resolves the event's whole audience; leave out testRecipients or dryRun")
        }
        if event.id == nil { event.id = Self.newEventId() }
        if event.publishedAt == nil { event.publishedAt = now() }
        // The same rules as a send; a scheduled event is rehearsed as if it went now.
        _ = try scheduleRules.decide(event, eventId: event.id!, now: now())
        let id = try await publisher.rehearse(event)
        let location = try RequestReading.hubPath(of: context) + "/notifications/\(id)"
        let deadline = ContinuousClock.now + rehearsalWait
        while ContinuousClock.now < deadline {
            if let status = try await storedStatus(id, hub: hub), status.state.isTerminal {
                let answer = RehearsalAnswer(
                    id: id, eventId: event.id!, status: status, previews: try await statusReader.previews(eventId: id, hub: hub),
                    expected: RehearsalAnswer.Expected(
                        audience: status.targets.total, throughput: (try? await statusReader.measuredThroughput()) ?? nil))
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                var data = try encoder.encode(answer)
                data.append(UInt8(ascii: "\n"))
                return Response(
                    status: .ok, headers: [.contentType: "application/json; charset=utf-8", .location: location],
                    body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        let members = [
            JSONMember(key: "id", value: .string(id)), JSONMember(key: "location", value: .string(location)),
            JSONMember(key: "rehearsal", value: .bool(true)), JSONMember(key: "eventId", value: .string(event.id!)),
        ]
        return .json(.object(members), status: .accepted, headers: [.location: location])
    }

    /// Checks a decoded event for `hub` (its hub, its schedule, the hub's quota), gives it an
    /// id and a publish time when it has none, and publishes it: the one path of every front.
    func accept(_ event: inout NotificationEvent, hub: HubName) async throws -> (id: String, decision: ScheduleRules.Decision) {
        if event.hub != hub {
            guard event.hub.isDefault else {
                throw APIError.invalidBody(
                    field: "hub", "the body names hub \"\(event.hub)\" but the request is for hub \"\(hub)\"")
            }
            event.hub = hub
        }
        if event.id == nil { event.id = Self.newEventId() }
        if event.publishedAt == nil { event.publishedAt = now() }
        let decision = try scheduleRules.decide(event, eventId: event.id!, now: now())
        let limits = await hubLimits(hub)
        try checkPayloads(of: event, hub: hub, limits: limits)
        try await admit(hub, limits: limits)
        return (try await publisher.publish(event, body: event.canonicalJSON()), decision)
    }

    /// `GET /v1/notifications/{id}`: the latest status record, or 404.
    @Sendable func status(_ request: Request, context: APIRequestContext) async throws -> Response {
        try context.requireCaller().authorize(.readNotificationStatus)
        let id = try eventId(context)
        guard let record = try await storedStatus(id, hub: RequestReading.hub(of: context)) else {
            throw APIError.notFound("a status for event \"\(id)\" (it may not have been planned yet)")
        }
        return try Self.statusResponse(record, status: .ok)
    }

    /// `DELETE /v1/notifications/{id}`: cancels a scheduled event, or the parts of a
    /// local-time one not released yet, or stops one being fanned out. 200 with the `cancelled`
    /// status; 202 when the scheduler or the fan-out has not finished acting on it within
    /// `cancelWait`; 409 when there is nothing left to cancel.
    @Sendable func cancel(_ request: Request, context: APIRequestContext) async throws -> Response {
        try context.requireCaller().authorize(.publish)
        let (record, status) = try await cancel(eventId: eventId(context), hub: RequestReading.hub(of: context))
        return try Self.statusResponse(record, status: status)
    }

    /// Cancels or stops the event (`EventCancellation`): 200 with its `cancelled` status, 202
    /// with its latest one while the scheduler, the fan-out or the sender is still acting on it.
    func cancel(eventId id: String, hub: HubName) async throws -> (StatusRecord, HTTPResponse.Status) {
        let cancellation = EventCancellation(statusReader: statusReader, scheduler: try requireScheduler(), wait: cancelWait)
        let (record, outcome) = try await cancellation.cancel(eventId: id, hub: hub)
        return (record, outcome == .cancelled ? .ok : .accepted)
    }

    /// `GET /v1/notifications?state=scheduled` (Manage): the schedules with releases pending;
    /// `?state=recent` (Send, Manage): the hub's most recent events (`recent`).
    @Sendable func list(_ request: Request, context: APIRequestContext) async throws -> Response {
        if request.uri.queryParameters.get("state") == "recent" { return try await recent(request, context: context) }
        try context.requireCaller().authorize(.listSchedules)
        guard request.uri.queryParameters.get("state") == StatusRecord.State.scheduled.rawValue else {
            throw APIError.invalidParameter(
                "state", "state=scheduled lists the pending schedules, state=recent the hub's recent events; nothing else is listed")
        }
        let scheduler = try requireScheduler()
        let pending: [ScheduledEvent]
        do {
            let hub = try RequestReading.hub(of: context)
            pending = try await scheduler.pendingSchedules().filter { $0.event.hub == hub }
        } catch {
            throw APIError(
                status: .serviceUnavailable, code: "unavailable", message: "the schedule index does not answer; retry later",
                headers: [.retryAfter: "1"])
        }
        let items: [JSONValue] = pending.map { scheduled in
            var members = [JSONMember(key: "id", value: .string(scheduled.eventId))]
            switch scheduled.event.schedule {
            case .at(let instant):
                members.append(JSONMember(key: "sendAt", value: .string(ISO8601Timestamp.format(instant, precision: .secondsWhenExact))))
            case .localTime(let local): members.append(JSONMember(key: "sendAtLocal", value: .string(local.description)))
            case nil: break
            }
            if let next = scheduled.nextReleaseAt {
                members.append(
                    JSONMember(key: "nextReleaseAt", value: .string(ISO8601Timestamp.format(next, precision: .secondsWhenExact))))
            }
            members.append(JSONMember(key: "pendingReleases", value: .number(String(scheduled.pending.count))))
            members.append(JSONMember(key: "releases", value: .number(String(scheduled.releases.count))))
            return .object(members)
        }
        return .json(.object([JSONMember(key: "notifications", value: .array(items))]), status: .ok)
    }

    func eventId(_ context: APIRequestContext) throws -> String {
        // Event ids may hold `#` (a quiet-hours release is `<id>#quiet-<seconds>`), which a URL
        // carries as `%23`; `%` is never part of an id, so decoding is unambiguous.
        let written = try RequestReading.parameter("id", of: context)
        let id = written.removingPercentEncoding ?? written
        // A test send's status is read under its own id (`<id>~test-<partition>-<offset>`).
        if let problem = IdentifierRules.eventIdProblem(id), DerivedSend.parse(id) == nil {
            throw APIError.invalidParameter("id", problem)
        }
        return id
    }

    private func requireScheduler() throws -> any NotificationScheduling {
        guard let scheduler else {
            throw APIError(status: .serviceUnavailable, code: "unavailable", message: "scheduling is not configured on this API")
        }
        return scheduler
    }

    /// The limits of a hub, read once per request (the default hub's from the deployment's
    /// settings); nil where the hub store does not answer (the fan-out still bounds payloads;
    /// the send quota is not counted).
    private func hubLimits(_ hub: HubName) async -> HubLimits? {
        guard !hub.isDefault else { return defaultHubLimits }
        return try? await hubs.hub(hub)?.limits
    }

    /// 400 for a native payload over its hub's `maxPayloadBytes` (the platforms' own limits were
    /// checked when the event was read), naming it. Where the hub store does not answer, the
    /// fan-out still skips such a payload (`payload_too_large`).
    private func checkPayloads(of event: NotificationEvent, hub: HubName, limits: HubLimits?) throws {
        guard let bound = limits?.maxPayloadBytes else { return }
        for (platform, payload) in event.native.sorted(by: { $0.key.rawValue < $1.key.rawValue }) where payload.utf8.count > bound {
            throw APIError.invalidBody(
                field: "native.\(platform.rawValue)",
                "the \(platform.rawValue) payload is \(payload.utf8.count) bytes; hub \"\(hub)\" takes at most \(bound) (its maxPayloadBytes)"
            )
        }
    }

    /// Counts the send against its hub's `sendsPerMinute`: over it, 403 `quota_exceeded`
    /// (Azure's answer for a quota) and nothing is published.
    private func admit(_ hub: HubName, limits: HubLimits?) async throws {
        guard let sendQuota, let perMinute = limits?.sendsPerMinute else { return }
        let admitted: Bool
        do {
            admitted = try await sendQuota.admit(hub: hub, perMinute: perMinute)
        } catch {
            throw APIError(
                status: .serviceUnavailable, code: "unavailable", message: "the send quota cannot be counted; retry later",
                headers: [.retryAfter: "1"])
        }
        guard admitted else {
            throw APIError(
                status: .forbidden, code: "quota_exceeded",
                message:
                    "hub \"\(hub)\" has sent its \(perMinute) notifications of this minute (its sendsPerMinute limit); retry next minute",
                headers: [.retryAfter: "60"])
        }
    }

    func storedStatus(_ id: String, hub: HubName = .default) async throws -> StatusRecord? {
        var record = try await storedStatusWithoutEngagement(id, hub: hub)
        if let engagements, record != nil, let fields = try? await engagements.counts(eventId: id, hub: hub) {
            let sent = record?.push?.values.reduce(0) { $0 + ($1["sent"] ?? 0) } ?? 0
            record?.engagement = EngagementFunnel(fields: fields, sent: sent)
        }
        return record
    }

    private func storedStatusWithoutEngagement(_ id: String, hub: HubName) async throws -> StatusRecord? {
        try await statusReader.storedStatus(id, hub: hub)
    }

    static func statusResponse(_ record: StatusRecord, status: HTTPResponse.Status) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var data = try encoder.encode(record)
        data.append(UInt8(ascii: "\n"))
        return Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: data))
        )
    }

    /// `ev-` and a random UUID: unique without coordination and valid as an event id.
    static func newEventId() -> String {
        "ev-" + UUID().uuidString.lowercased()
    }
}

/// The answer to `POST /v1/notifications?dryRun=true`.
struct RehearsalAnswer: Encodable {
    /// What the deployment's measured speed makes of the audience: when half of it and nine
    /// tenths of it would have their deliveries, in seconds after the publish.
    struct Expected: Encodable {
        var throughputPerSecond: Int
        var halfSeconds: Double
        var ninetyPercentSeconds: Double

        /// Nil before the deployment has measured a fan-out (`StatusReader.throughputMinimum`).
        init?(audience: Int, throughput: Int?) {
            guard let measured = throughput, measured > 0 else { return nil }
            throughputPerSecond = measured
            halfSeconds = (Double(audience) * 0.5 / Double(measured) * 1_000).rounded() / 1_000
            ninetyPercentSeconds = (Double(audience) * 0.9 / Double(measured) * 1_000).rounded() / 1_000
        }
    }

    var id: String
    var eventId: String
    var rehearsal = true
    var status: StatusRecord
    var previews: [RehearsalPreview]
    var expected: Expected?
}
