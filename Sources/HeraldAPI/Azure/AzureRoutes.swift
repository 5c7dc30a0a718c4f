import Foundation
import HTTPTypes
import HeraldDomain
import Hummingbird
import NIOCore

/// Azure Notification Hubs' REST protocol on `/{hub}/…`, so a client written for Azure (its
/// SDKs, or code that signs Azure SAS tokens) talks to Herald with only its connection string
/// changed. The routes call the same cores as `/v1` (`InstallationRoutes`, `NotificationRoutes`);
/// errors are Azure's XML `<Error>` with Azure's status codes. docs/azure-compatibility.md lists
/// every operation, what Herald does differently, and what it does not take.
struct AzureRoutes: Sendable {
    let installations: InstallationRoutes
    let notifications: NotificationRoutes
    let registrations: RegistrationRoutes
    /// The deployment's hub URI: `Location` headers are absolute under it, as Azure's are.
    let hubResource: String
    let limits: APILimits
    let now: @Sendable () -> Date
    /// How long a test send's answer waits for its receipts.
    let testSendWait: Duration

    static let apiVersion = "2020-06"

    func add(to router: Router<APIRequestContext>, authenticator: RequestAuthenticator, hubs: any HubStore) {
        let group = router.group("{hub}")
            .add(middleware: ErrorMiddleware(render: { error, _, _ in AzureXML.error(error) }))
            .add(
                middleware: AuthenticationMiddleware(
                    authenticator: authenticator, hubs: hubs, hubOf: AuthenticationMiddleware.hubOfAzureRoute))
        group.put("installations/{id}", use: putInstallation)
        group.patch("installations/{id}", use: patchInstallation)
        group.get("installations/{id}", use: getInstallation)
        group.delete("installations/{id}", use: deleteInstallation)
        group.post("messages", use: send)
        group.post("messages/$batch", use: sendBatch)
        group.get("messages/{id}", use: details)
        group.post("schedulednotifications", use: schedule)
        group.delete("schedulednotifications/{id}", use: cancel)
        addRegistrations(to: group)
    }

    // MARK: Installations

    /// `PUT /{hub}/installations/{id}`: 200, empty, as Azure answers.
    @Sendable func putInstallation(_ request: Request, context: APIRequestContext) async throws -> Response {
        let id = try RequestReading.parameter("id", of: context)
        let bytes = try await RequestReading.body(of: request, limit: limits.maxRequestBytes)
        _ = try await installations.put(document: AzureInstallation.heraldDocument(from: bytes), id: id, expected: nil, context: context)
        return Response(status: .ok)
    }

    /// `PATCH /{hub}/installations/{id}`: Azure's JSON Patch (a string added to `/tags` is
    /// appended, `/tags/<tag>` removed by value); 200, empty.
    @Sendable func patchInstallation(_ request: Request, context: APIRequestContext) async throws -> Response {
        let id = try RequestReading.parameter("id", of: context)
        let bytes = try await RequestReading.body(of: request, limit: limits.maxRequestBytes)
        let patch = try JSONPatch.decode(AzureInstallation.heraldPatch(bytes), maxOperations: limits.maxPatchOperations)
        _ = try await installations.apply(patch, id: id, expected: nil, context: context)
        return Response(status: .ok)
    }

    /// `GET /{hub}/installations/{id}`: Azure's installation JSON.
    @Sendable func getInstallation(_ request: Request, context: APIRequestContext) async throws -> Response {
        let id = try RequestReading.parameter("id", of: context)
        do {
            return .json(AzureInstallation.azureJSON(try await installations.read(id: id, context: context)))
        } catch let error as APIError where error.status == .gone {
            // Azure answers a deleted installation as one that does not exist.
            throw APIError.notFound("installation \"\(id)\"")
        }
    }

    /// `DELETE /{hub}/installations/{id}`: 204.
    @Sendable func deleteInstallation(_ request: Request, context: APIRequestContext) async throws -> Response {
        try await installations.delete(id: RequestReading.parameter("id", of: context), request: request, context: context)
        return Response(status: .noContent)
    }

    // MARK: Sends

    /// `POST /{hub}/messages`: 201 with `Location` naming the notification (its id is Herald's
    /// event id) and `TrackingId`; the body repeats them as JSON for clients that read bodies.
    @Sendable func send(_ request: Request, context: APIRequestContext) async throws -> Response {
        try await publish(request, context: context, kind: "messages", schedule: nil)
    }

    /// `POST /{hub}/messages/$batch?direct`: Azure's direct batch send, a `multipart/mixed`
    /// body with the native payload (the part named `notification`) and a JSON array of up to
    /// 1,000 device handles (the part named `devices`); answered as a single send.
    @Sendable func sendBatch(_ request: Request, context: APIRequestContext) async throws -> Response {
        try context.requireCaller().authorize(.publish)
        let hub = try RequestReading.hub(of: context)
        guard try Self.isDirect(request) else {
            throw APIError.invalidParameter("direct", "a batch send is a direct send: add ?direct to the URI")
        }
        if request.headers[Self.deviceHandle] != nil {
            throw APIError.invalidParameter(
                Self.deviceHandle.rawName, "a batch send names its devices in the body's devices part: leave out the header")
        }
        let body = try await RequestReading.body(of: request, limit: limits.maxRequestBytes)
        let (notification, handles) = try Self.batchParts(body, contentType: request.headers[.contentType])
        var event = try Self.event(body: notification, headers: request.headers, now: now(), direct: handles, directSource: "devices")
        return try await accept(&event, hub: hub, context: context, kind: "messages")
    }

    /// The notification part and the device handles of a direct batch send's body.
    static func batchParts(_ body: [UInt8], contentType: String?) throws -> (notification: [UInt8], handles: [String]) {
        let boundary: String
        switch MultipartMixed.boundary(ofContentType: contentType) {
        case .success(let found): boundary = found
        case .failure(let problem): throw APIError.invalidParameter("Content-Type", problem.message)
        }
        let multipart: MultipartMixed
        switch MultipartMixed.parse(body, boundary: boundary) {
        case .success(let parsed): multipart = parsed
        case .failure(let problem): throw APIError.invalidParameter("body", problem.message)
        }
        let names = multipart.parts.map { $0.name ?? "" }
        guard let notification = multipart.parts.first(where: { $0.name == "notification" }),
            let devices = multipart.parts.first(where: { $0.name == "devices" }), multipart.parts.count == 2
        else {
            throw APIError.invalidParameter(
                "body",
                "a batch send has two parts, named notification and devices in their Content-Disposition; found \(names.map { "\"\($0)\"" }.joined(separator: ", "))"
            )
        }
        let list = try RequestReading.json(devices.body, what: "the devices part")
        guard case .array(let entries) = list else {
            throw APIError.invalidParameter("devices", "the devices part is a JSON array of device handles")
        }
        var handles: [String] = []
        for (position, entry) in entries.enumerated() {
            guard case .string(let handle) = entry else {
                throw APIError.invalidParameter(
                    "devices[\(position)]", "expected a device handle (a string), found \(entry.kindDescription)")
            }
            handles.append(handle)
        }
        return (notification.body, handles)
    }

    /// `POST /{hub}/schedulednotifications` with `ServiceBusNotification-ScheduleTime`.
    @Sendable func schedule(_ request: Request, context: APIRequestContext) async throws -> Response {
        guard let text = request.headers[Self.scheduleTime] else {
            throw APIError.invalidParameter(Self.scheduleTime.rawName, "a scheduled notification needs its ScheduleTime header")
        }
        guard let instant = Self.scheduleInstant(text) else {
            throw APIError.invalidParameter(
                Self.scheduleTime.rawName, "\"\(text)\" is not an ISO 8601 date and time (for example 2030-01-02T03:04:05Z)")
        }
        return try await publish(request, context: context, kind: "schedulednotifications", schedule: .at(instant))
    }

    /// `DELETE /{hub}/schedulednotifications/{id}`: 200 once cancelled (or still being
    /// cancelled); 404 for an id with no schedule; 409 when it was already sent.
    @Sendable func cancel(_ request: Request, context: APIRequestContext) async throws -> Response {
        try context.requireCaller().authorize(.publish)
        let id = try RequestReading.parameter("id", of: context)
        if let problem = IdentifierRules.eventIdProblem(id) { throw APIError.invalidParameter("id", problem) }
        _ = try await notifications.cancel(eventId: id, hub: RequestReading.hub(of: context))
        return Response(status: .ok)
    }

    /// `GET /{hub}/messages/{id}`: Azure's `NotificationDetails` from the event's status and
    /// its receipts; 404 while Herald knows no status for it.
    @Sendable func details(_ request: Request, context: APIRequestContext) async throws -> Response {
        try context.requireCaller().authorize(.readNotificationStatus)
        let id = try RequestReading.parameter("id", of: context)
        let hub = try RequestReading.hub(of: context)
        guard let status = try await notifications.storedStatus(id, hub: hub) else {
            throw APIError.notFound("a notification \"\(id)\" in hub \"\(hub)\" (it may not have been planned yet)")
        }
        return AzureXML.response(AzureXML.notificationDetails(status, location: location(context, "messages/\(id)")))
    }

    private func publish(_ request: Request, context: APIRequestContext, kind: String, schedule: EventSchedule?) async throws -> Response {
        try context.requireCaller().authorize(.publish)
        let hub = try RequestReading.hub(of: context)
        let headers = request.headers
        let direct = try Self.directHandle(request)
        let test = request.uri.queryParameters.get("test").map { $0.isEmpty || $0.lowercased() == "true" } ?? false
        let body = try await RequestReading.body(of: request, limit: limits.maxRequestBytes)
        var event = try Self.event(body: body, headers: headers, now: now(), direct: direct.map { [$0] })
        if test || headers[Self.testSend]?.lowercased() == "true" {
            guard schedule == nil else { throw APIError.invalidParameter("test", "a test send goes now; it cannot be scheduled") }
            guard direct == nil else {
                throw APIError.invalidParameter("test", "a test send goes to the hub's own registrations; a direct send needs no test")
            }
            return try await testSend(event, hub: hub)
        }
        event.schedule = schedule
        return try await accept(&event, hub: hub, context: context, kind: kind)
    }

    /// Publishes `event` and answers as Azure does: 201, `Location` naming the notification under
    /// `kind` (`messages`, `schedulednotifications`), `TrackingId`, and the same as JSON.
    private func accept(_ event: inout NotificationEvent, hub: HubName, context: APIRequestContext, kind: String) async throws
        -> Response
    {
        let (id, _) = try await notifications.accept(&event, hub: hub)
        let location = location(context, "\(kind)/\(id)")
        let tracking = UUID().uuidString.lowercased()
        var fields = HTTPFields()
        fields[.location] = location
        fields[Self.trackingId] = tracking
        fields[Self.correlationId] = tracking
        return .json(
            .object([
                JSONMember(key: "notificationId", value: .string(id)), JSONMember(key: "location", value: .string(location)),
                JSONMember(key: "trackingId", value: .string(tracking)),
            ]), status: .created, headers: fields)
    }

    // MARK: Test send

    /// Azure's test send (`?test` or `ServiceBusNotification-TestSend: true`): the send goes,
    /// fully rendered, to at most `testSendDevices` registrations of its audience, as a Herald
    /// test send (records and status say `test`; the event's id stays free), and the answer is
    /// Azure's `NotificationOutcome` with each one's receipt, once all are in or `testSendWait`
    /// has passed. The devices are the first of the audience found among the hub's
    /// registrations (its tags' members, or all of them), at most `testSendScan` looked at.
    private func testSend(_ event: NotificationEvent, hub: HubName) async throws -> Response {
        let devices = try await testAudience(of: event, hub: hub)
        guard !devices.isEmpty else { return AzureXML.response(AzureXML.notificationOutcome([]), status: .created) }
        var test = event
        test.testRecipients = devices.map { .device($0.registrationId) }
        let (id, _) = try await notifications.accept(&test, hub: hub)
        var outcomes: [String: (outcome: PushOutcome, reason: String?)] = [:]
        // Every delivery answered: a device without a receipt had none rendered for it.
        var allAnswered = false
        let deadline = ContinuousClock.now + testSendWait
        while ContinuousClock.now < deadline {
            if let status = try await notifications.storedStatus(id, hub: hub), status.state.isTerminal {
                outcomes = try await notifications.statusReader.testOutcomes(eventId: id, hub: hub)
                allAnswered = outcomes.count >= status.targets.total
                if allAnswered { break }
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        let results = devices.map { device in
            AzureXML.TestResult(
                registration: device,
                outcome: outcomes[device.registrationId].map { .receipt($0.outcome, reason: $0.reason) }
                    ?? (allAnswered ? .notDelivered : .noAnswerYet))
        }
        var fields = HTTPFields()
        fields[Self.trackingId] = id
        return AzureXML.response(AzureXML.notificationOutcome(results), status: .created, headers: fields)
    }

    /// Up to `testSendDevices` registrations of `hub` the event would reach: its audience's, and
    /// of the kind it is for (a template send's template registrations, a native send's native
    /// ones of its platforms).
    private func testAudience(of event: NotificationEvent, hub: HubName) async throws -> [Registration] {
        let store = installations.registry.store(for: hub)
        let expression = event.audience.expression
        // An `a || b` audience is listed tag by tag; any other is found among all registrations.
        let lists: [String?] = expression?.orOnlyTags ?? [nil]
        var found: [Registration] = []
        var seen: Set<String> = []
        var scanned = 0
        for tag in lists {
            var cursor: String?
            repeat {
                let page: RegistrationPage
                do {
                    page = try await store.list(RegistrationQuery(tag: tag, limit: 100, cursor: cursor))
                } catch {
                    throw APIError.from(error)
                }
                for registration in page.items where seen.insert(registration.registrationId).inserted {
                    if Self.wouldReceive(registration, event) { found.append(registration) }
                    if found.count == Self.testSendDevices { return found }
                }
                scanned += page.items.count
                cursor = page.nextCursor
            } while cursor != nil && scanned < Self.testSendScan
        }
        return found
    }

    static func wouldReceive(_ registration: Registration, _ event: NotificationEvent) -> Bool {
        if let expression = event.audience.expression, !expression.evaluate(Set(registration.tags)) { return false }
        guard let template = registration.template else { return event.native[registration.platform] != nil }
        return event.includesTemplate(named: template.name)
    }

    /// Azure's number of devices a test send reaches.
    static let testSendDevices = 10
    /// Registrations looked at, at most, to find them.
    static let testSendScan = 10_000

    /// The absolute URL of `path` in the request's hub, with Azure's `api-version`.
    func location(_ context: APIRequestContext, _ path: String) -> String {
        var base = hubResource
        while base.hasSuffix("/") { base.removeLast() }
        let hub = context.parameters.get("hub") ?? HubName.default.rawValue
        return "\(base)/\(hub)/\(path)?api-version=\(Self.apiVersion)"
    }

    // MARK: Azure's send request as a Herald event

    static let format = HTTPField.Name("ServiceBusNotification-Format")!
    static let tags = HTTPField.Name("ServiceBusNotification-Tags")!
    static let scheduleTime = HTTPField.Name("ServiceBusNotification-ScheduleTime")!
    static let deviceHandle = HTTPField.Name("ServiceBusNotification-DeviceHandle")!
    /// The platform of each native format.
    static let nativePlatforms: [String: Platform] = ["apple": .apns, "fcmv1": .fcm, "windows": .wns]
    static let testSend = HTTPField.Name("ServiceBusNotification-TestSend")!
    static let timeToLive = HTTPField.Name("ServiceBusNotification-TimeToLive")!
    static let urgency = HTTPField.Name("ServiceBusNotification-Urgency")!
    static let trackingId = HTTPField.Name("TrackingId")!
    static let correlationId = HTTPField.Name("x-ms-correlation-request-id")!

    /// The event an Azure send describes, validated as every event is. Its body is the
    /// template properties (`template`) or the platform's native payload (`apple`, `fcmv1`,
    /// `windows`); the tags header is its audience (none: everyone); `apns-priority`,
    /// `apns-collapse-id`, `apns-expiration`, the TTL and urgency headers become the event's
    /// priority, collapse id and expiry. What Herald cannot honour is refused, never dropped.
    /// The device handle of a direct send (`?direct` with `ServiceBusNotification-DeviceHandle`),
    /// nil for a send to the hub's registrations; either without the other is refused.
    static func directHandle(_ request: Request) throws -> String? {
        let handle = request.headers[Self.deviceHandle]
        guard try isDirect(request) else {
            guard handle == nil else {
                throw APIError.invalidParameter(
                    Self.deviceHandle.rawName,
                    "a device handle is sent to directly with ?direct in the URI; add it, or leave out the header")
            }
            return nil
        }
        guard let handle else {
            throw APIError.invalidParameter(
                Self.deviceHandle.rawName, "a direct send names its device in the ServiceBusNotification-DeviceHandle header")
        }
        return handle
    }

    /// Whether the URI says `?direct` (or `?direct=true`); another value is refused.
    static func isDirect(_ request: Request) throws -> Bool {
        guard let flag = request.uri.queryParameters.get("direct") else { return false }
        guard flag.isEmpty || flag.lowercased() == "true" else {
            throw APIError.invalidParameter("direct", "?direct takes no value (or true); found \"\(flag)\"")
        }
        return true
    }

    /// The event of a send: `direct` names the device handles of a direct send, which take the
    /// payload of the native format (`ServiceBusNotification-Format`); what else the event refuses
    /// with them (tags) is named by its header.
    /// `directSource` names where the handles came from in errors (the header, or the batch's
    /// `devices` part).
    static func event(
        body: [UInt8], headers: HTTPFields, now: Date, direct: [String]? = nil, directSource: String = deviceHandle.rawName
    ) throws -> NotificationEvent {
        guard let format = headers[Self.format]?.lowercased() else {
            throw APIError.invalidParameter(Self.format.rawName, "the header is required: template, apple, fcmv1 or windows")
        }
        var members: [JSONMember] = []
        if let direct {
            guard let platform = Self.nativePlatforms[format] else {
                throw APIError.invalidParameter(
                    Self.format.rawName, "a direct send delivers a native payload: apple, fcmv1 or windows, not \"\(format)\"")
            }
            let targets = direct.map { handle in
                JSONValue.object([
                    JSONMember(key: "platform", value: .string(platform.rawValue)), JSONMember(key: "handle", value: .string(handle)),
                ])
            }
            members.append(JSONMember(key: "direct", value: .array(targets)))
        }
        if let expression = headers[Self.tags] {
            members.append(JSONMember(key: "tags", value: .string(expression)))
        }
        let text = String(decoding: body, as: UTF8.self)
        switch format {
        case "template":
            members.append(JSONMember(key: "properties", value: try RequestReading.json(body, what: "the template properties")))
        case "apple":
            if let pushType = headers[HTTPField.Name("apns-push-type")!], pushType != "alert" {
                throw APIError.invalidParameter(
                    "apns-push-type",
                    "Herald sends native APNs payloads as alert pushes; a \(pushType) push needs a template registration whose apns-push-type header says so"
                )
            }
            members.append(
                JSONMember(
                    key: "native", value: .object([JSONMember(key: "apns", value: try RequestReading.json(body, what: "the APNs payload"))])
                ))
        case "fcmv1":
            var payload = try RequestReading.json(body, what: "the FCM v1 payload")
            if payload["message"] == nil { payload = .object([JSONMember(key: "message", value: payload)]) }
            members.append(JSONMember(key: "native", value: .object([JSONMember(key: "fcm", value: payload)])))
        case "windows":
            members.append(JSONMember(key: "native", value: .object([JSONMember(key: "wns", value: .string(text))])))
        default:
            throw APIError.invalidParameter(
                Self.format.rawName, "format \"\(format)\" is not one Herald sends: template, apple, fcmv1 or windows")
        }
        // A native send reaches native registrations only, as Azure's does.
        if format != "template", direct == nil { members.append(JSONMember(key: "templates", value: .array([]))) }
        if headers[HTTPField.Name("apns-topic")!] != nil {
            throw APIError.invalidParameter("apns-topic", "the APNs topic is the deployment's (HERALD_APNS_TOPIC); leave the header out")
        }
        var priority: String?
        if let value = headers[HTTPField.Name("apns-priority")!] {
            guard value == "10" || value == "5" else { throw APIError.invalidParameter("apns-priority", "apns-priority is 10 or 5") }
            priority = value == "10" ? "high" : "normal"
        }
        if let value = headers[Self.urgency]?.lowercased() {
            guard ["high", "normal", "low", "very-low"].contains(value) else {
                throw APIError.invalidParameter(Self.urgency.rawName, "the urgency is high, normal, low or very-low")
            }
            priority = value == "high" ? "high" : "normal"
        }
        if let priority { members.append(JSONMember(key: "priority", value: .string(priority))) }
        if let collapse = headers[HTTPField.Name("apns-collapse-id")!] {
            members.append(JSONMember(key: "collapseId", value: .string(collapse)))
        }
        var expiresAt: Date?
        if let value = headers[HTTPField.Name("apns-expiration")!] {
            guard let seconds = Int64(value), seconds >= 0 else {
                throw APIError.invalidParameter("apns-expiration", "apns-expiration is a UNIX time in seconds")
            }
            if seconds > 0 { expiresAt = Date(timeIntervalSince1970: TimeInterval(seconds)) }
        }
        if let value = headers[Self.timeToLive] {
            guard let seconds = Int64(value), seconds > 0 else {
                throw APIError.invalidParameter(Self.timeToLive.rawName, "the time to live is a positive number of seconds")
            }
            let candidate = now.addingTimeInterval(TimeInterval(seconds))
            expiresAt = min(expiresAt ?? candidate, candidate)
        }
        if let expiresAt {
            members.append(JSONMember(key: "expiresAt", value: .string(ISO8601Timestamp.format(expiresAt, precision: .secondsWhenExact))))
        }
        var bytes: [UInt8] = []
        JSONValue.object(members).write(into: &bytes)
        do {
            return try NotificationEvent.decode(bytes)
        } catch {
            // Name the header a field came from, so the error says where it is.
            var issues = error.issues
            for index in issues.indices {
                if issues[index].field == "tags" || issues[index].field.hasPrefix("tags") { issues[index].field = Self.tags.rawName }
                let field = issues[index].field
                if field == "direct" || field.hasPrefix("direct[") {
                    // devices[3].handle for a batch's list; the header itself for a single handle.
                    issues[index].field = directSource == "devices" ? "devices" + field.dropFirst("direct".count) : directSource
                }
            }
            throw APIError.validation(ValidationFailure(issues: issues))
        }
    }

    /// An instant as Azure's SDKs write it: ISO 8601 with up to 7 fractional digits and `Z`, an
    /// offset, or none (UTC).
    static func scheduleInstant(_ text: String) -> Date? {
        var value = text.trimmingCharacters(in: .whitespaces)
        let hasZone =
            value.hasSuffix("Z") || value.hasSuffix("z") || value.range(of: #"[+-]\d\d:?\d\d$"#, options: .regularExpression) != nil
        if !hasZone { value += "Z" }
        // At most milliseconds: drop further fractional digits.
        if let dot = value.firstIndex(of: ".") {
            let digits = value[value.index(after: dot)...].prefix { $0.isNumber }
            if digits.count > 3 {
                let end = value.index(value.index(after: dot), offsetBy: digits.count)
                value = String(value[..<value.index(after: dot)]) + digits.prefix(3) + value[end...]
            }
        }
        return ISO8601Timestamp.parse(value)
    }
}
