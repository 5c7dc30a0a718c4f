import ArgumentParser
import HeraldCommandLine
import Foundation
import HeraldApp
import HeraldDomain
import HeraldPipeline
import HeraldRedis
import HeraldStreams

struct PublishCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "publish",
        abstract: "Publish a breaking-news event to herald.events.",
        discussion: """
            Either build the event from flags:
              herald publish --tags 'World || Politics' --property News_English='Summit ends' --property News_French='Fin du sommet'
            or give a whole event: herald publish --file event.json (JSON as in docs/topics.md).
            A breaking alert goes ahead of the fan-outs already running: --urgency breaking
            (normal is the default; bulk for digests).
            Schedule it with --at 2026-11-25T07:30:00Z (one instant) or --at-local 2026-11-25T07:30:00
            (that hour in each device's own time zone).
            Test it first on your own devices: --test-recipient <registration or installation id> or
            --test-recipient '$UserId:<id>' (repeatable, at most 100) sends the event, rendered as the
            real send would be, to those devices only, under a test id of its own (printed); the event's
            id stays free for the real send.
            Rehearse it at full scale with --dry-run: planned and resolved against every registration,
            counted per platform and template and rendered once per template, delivered to none; the
            rehearsal's status and one preview per template are printed.
            """
    )

    @OptionGroup var options: SettingsOptions
    @Option(help: "The whole event as JSON, or @file (other event flags are then not allowed).") var file: String?
    @Option(help: "Event id (default: assigned).") var id: String?
    @Option(help: "Tag expression; omit for a broadcast to every registration.") var tags: String?
    @Option(name: .customLong("property"), help: "NAME=VALUE for templates; repeatable.") var properties: [String] = []
    @Option(name: .customLong("native"), help: "PLATFORM=JSON or PLATFORM=@file: payload for registrations without a template; repeatable.")
    var natives: [String] = []
    @Option(name: .customLong("template"), help: "Only deliver to templates with this name; repeatable.") var templates: [String] = []
    @Option(help: "ISO-8601 expiry, e.g. 2026-11-21T19:00:00Z.") var expiresAt: String?
    @Option(help: "high or normal.") var priority: String?
    @Option(help: "breaking (ahead of the fan-outs already running), normal (the default) or bulk.") var urgency: String?
    @Option(help: "Collapse id (apns-collapse-id, FCM collapse key).") var collapseId: String?
    @Option(help: "Send at this instant (RFC 3339, e.g. 2026-11-25T07:30:00Z): sendAt.") var at: String?
    @Option(help: "Send at this wall-clock time in each device's time zone (e.g. 2026-11-25T07:30:00): sendAtLocal.")
    var atLocal: String?
    @Option(
        name: .customLong("test-recipient"),
        help: "Send a test to this registration id, installation id or $UserId:<id> only; repeatable.")
    var testRecipients: [String] = []
    @Flag(help: "Wait until the event's status is final and print it.") var wait = false
    @Flag(help: "Rehearse: resolve and render the event without delivering it; prints its counts and previews.")
    var dryRun = false

    func validate() throws {
        if file != nil,
            tags != nil || !properties.isEmpty || !natives.isEmpty || !templates.isEmpty
                || expiresAt != nil || priority != nil || urgency != nil || collapseId != nil || id != nil || at != nil || atLocal != nil
                || !testRecipients.isEmpty
        {
            throw ValidationError("--file gives the whole event; do not combine it with other event flags")
        }
        for property in properties where !property.contains("=") {
            throw ValidationError("--property expects NAME=VALUE, got '\(property)'")
        }
        for native in natives where !native.contains("=") {
            throw ValidationError("--native expects PLATFORM=JSON, got '\(native)'")
        }
    }

    func run() async throws {
        let body = try eventBody()
        let event: NotificationEvent
        do {
            event = try NotificationEvent.decode(Array(body))
        } catch {
            throw CommandFailure("the event is not valid:\n" + error.issues.map { "  \($0.field): \($0.message)" }.joined(separator: "\n"))
        }
        let settings = options.settings()
        // A time the planner would dead-letter is refused here, with the same words.
        do {
            _ = try settings.scheduleRules().decide(event, eventId: event.id ?? "event", now: Date())
        } catch let failure as ValidationFailure {
            throw CommandFailure(
                "the event cannot be scheduled:\n" + failure.issues.map { "  \($0.field): \($0.message)" }.joined(separator: "\n"))
        }
        let publisher = try EventPublisher(
            bootstrapServers: settings[.kafkaBrokers], topics: try settings.topics, extra: settings.kafkaProperties()
        )
        if dryRun {
            if event.testRecipients != nil { throw CommandFailure("--dry-run rehearses the whole audience; leave out --test-recipient") }
            let receipt = try await publisher.publish(event, rehearsal: true)
            let id = DerivedSend.rehearsal.eventId(of: receipt.eventId, partition: receipt.partition, offset: receipt.offset)
            print("rehearsal \(id) of \(receipt.eventId): nothing is delivered")
            try await waitForStatus(eventId: id, settings: settings, localTime: false)
            let pool = RedisConnectionPool(configuration: try settings.redisConfiguration(), size: 1)
            defer { pool.shutdown() }
            for preview in try await StatusReader(pool: pool, layout: try settings.layout()).previews(eventId: id, hub: event.hub) {
                print(
                    "preview \(preview.platform.rawValue) \(preview.template): \(preview.bytes) of \(preview.limit) bytes: \(preview.payload)"
                )
            }
            return
        }
        let receipt = try await publisher.publish(event)
        print("published \(receipt.eventId) to \(try settings.topics.events)[\(receipt.partition)] at offset \(receipt.offset)")
        var statusId = receipt.eventId
        if event.testRecipients != nil {
            statusId = DerivedSend.test.eventId(of: receipt.eventId, partition: receipt.partition, offset: receipt.offset)
            print("test send \(statusId): \(receipt.eventId) stays free for the real send")
        }
        if wait { try await waitForStatus(eventId: statusId, settings: settings, localTime: atLocal != nil) }
    }

    private func eventBody() throws -> Data {
        if let file { return Data(try InputArgument.resolve(file).utf8) }
        var object: [String: Any] = [:]
        if let id { object["id"] = id }
        if let tags { object["tags"] = tags }
        try TextArguments.add(properties: properties, natives: natives, to: &object)
        if !templates.isEmpty { object["templates"] = templates }
        if let expiresAt { object["expiresAt"] = expiresAt }
        if let priority { object["priority"] = priority }
        if let urgency { object["urgency"] = urgency }
        if let collapseId { object["collapseId"] = collapseId }
        if let at { object["sendAt"] = at }
        if let atLocal { object["sendAtLocal"] = atLocal }
        if !testRecipients.isEmpty { object["testRecipients"] = testRecipients }
        return try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    }

    /// Waits for a final status: for a `sendAt` event, the fan-out's after its release (up
    /// to 120 s after the release time); for a local-time one, `released` (each part then has
    /// a status of its own).
    private func waitForStatus(eventId: String, settings: HeraldSettings, localTime: Bool) async throws {
        let pool = RedisConnectionPool(configuration: try settings.redisConfiguration(), size: 1)
        defer { pool.shutdown() }
        let reader = StatusReader(pool: pool, layout: try settings.layout())
        var deadline = Date().addingTimeInterval(120)
        while Date() < deadline {
            if let json = try await reader.statusJSON(eventId: eventId), let status = try await reader.status(eventId: eventId) {
                if status.state == .scheduled, let next = status.schedule?.releases.first(where: { $0.state == .pending }) {
                    deadline = max(deadline, next.releaseAt.addingTimeInterval(120))
                }
                if status.state.isTerminal && (status.state != .released || localTime) {
                    print(String(decoding: json, as: UTF8.self))
                    return
                }
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw CommandFailure("no final status for \(eventId) within 120 s of its time (is a worker running?)")
    }
}
