import HeraldApp
import Foundation
import HeraldAPI
import HeraldDomain
import HeraldKafka
import HeraldPipeline
import HeraldRegistry
import Logging
import ServiceLifecycle
import HeraldStreams

#if canImport(Glibc)
    import Glibc
#endif

/// `make run`: tells the seed tutorials' story against a running API and worker. Registers
/// the devices over HTTP (devices with a Listen token, Alice's through the notify-users flow),
/// publishes the events with a Send token, waits for each status to complete, and prints what
/// every device received. Then it keeps running until Ctrl-C, or stops the process.
struct DemoStory: Service {
    let client: HeraldHTTPClient
    let hubURI: String
    let listen: (name: String, key: String)
    let send: (name: String, key: String)
    let manage: (name: String, key: String)
    let userTokenKey: String
    let bootstrapServers: String
    /// librdkafka properties of `HERALD_KAFKA_CONFIG_FILE`.
    let kafkaProperties: [String: String]
    let topics: HeraldTopics
    let keepRunning: Bool
    /// Where the process logs (nil: the console).
    let logFile: String?
    let logger: Logger
    /// The reader's browser's subscription on the local Web Push service.
    let browserSubscription: [String: any Sendable]
    /// A Windows PC's channel URI on the local WNS server.
    let windowsChannel: String
    /// What that browser decrypted so far, oldest first.
    let browserInbox: @Sendable () -> [String]
    /// Turns the local APNs and FCM servers' request log on or off (the lock screens read it).
    let recordPushes: @Sendable (Bool) -> Void
    /// The registrations log (`herald.registrations`), where chapter 10 registers its audience.
    let registrationsTopic: String
    /// What a device (platform, handle) shows on its lock screen, from what the local APNs and
    /// FCM servers accepted for it (`LockScreen`).
    let lockScreen: @Sendable (_ platform: String, _ handle: String) -> [String]

    func run() async throws {
        do {
            try await tell()
        } catch {
            say("\nThe demo failed: \(error)")
            if !keepRunning { kill(getpid(), SIGTERM) }
            throw error
        }
        if keepRunning {
            say(
                "\nHerald keeps running: API on \(client.baseURL.absoluteString), worker roles planner, fanout, indexer, scheduler, sender."
            )
            say("The newsroom console: \(consoleURL)  (sign in with the newsroom's Send key, as this connection string:)")
            say("  \(connectionString(send))")
            say("Try: herald tail deliveries --follow   (in another terminal).  Ctrl-C stops everything cleanly.")
        } else {
            kill(getpid(), SIGTERM)
        }
        try? await gracefulShutdown()
    }

    /// The console's page on this API.
    var consoleURL: String { client.baseURL.appendingPathComponent("console/").absoluteString }

    /// Azure's form of a policy's key, which the console signs in with.
    func connectionString(_ policy: (name: String, key: String)) -> String {
        let host = client.baseURL.host.map { "\($0):\(client.baseURL.port ?? 80)" } ?? "localhost"
        return "Endpoint=sb://\(host)/;SharedAccessKeyName=\(policy.name);SharedAccessKey=\(policy.key)"
    }

    private func sas(_ policy: (name: String, key: String)) -> String {
        SharedAccessSignature.token(resource: hubURI, policy: policy.name, key: policy.key, expiry: Date().addingTimeInterval(3600))
    }

    private func tell() async throws {
        say("== Herald: breaking news, localized, to every device that follows it ==")
        if let logFile { say("   (the log of the API and the worker roles: \(logFile))") }
        say("")
        try await waitUntilReady()

        say("1. Devices register (Azure Notification Hubs style: handle, category tags, localized template)")
        var devicesById: [String: DemoDevice] = [:]
        let devices =
            DemoDevices.all + [DemoDevices.browser(subscription: browserSubscription), DemoDevices.windows(channel: windowsChannel)]
        for device in devices {
            let id = try await register(device)
            devicesById[id] = device
            let kind = device.tokenKind ?? (device.template == nil ? "native" : (device.template?["name"] as? String ?? ""))
            say("   \(device.name): \(device.platform), tags \(device.tags.joined(separator: ", ")), \(kind) -> \(id)")
        }

        say("\n2. The newsroom publishes")
        let runId = String(UUID().uuidString.prefix(6)).lowercased()
        var eventIds: [(String, String)] = []
        for (title, body) in DemoEvents.all(runId: runId) {
            let reply = try await client.authorized(sas(send)).send("POST", "/v1/notifications", body: client.json(body))
            guard reply.status == 202 else { throw HTTPClientError(message: "publish \(title): \(reply.status) \(reply.text)") }
            let id = body["id"] as? String ?? "?"
            eventIds.append((title, id))
            say("   \(title): tags \(body["tags"] ?? "") -> 202, \(reply.header("Location") ?? id)")
        }

        say("\n3. Status of each event (herald.status, GET /v1/notifications/{id})")
        for (title, id) in eventIds {
            let status = try await waitForStatus(id)
            let counts = status.targets.byPlatform.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            let duration = status.timings.durationMs.map { "\($0) ms" } ?? "-"
            let reasons = (status.skippedReasons ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            say(
                "   \(id)  \(status.state.rawValue): \(status.targets.total) deliveries (\(counts.isEmpty ? "none" : counts)), skipped \(status.skipped)\(reasons.isEmpty ? "" : " (\(reasons))"), \(duration)  [\(title)]"
            )
        }

        say("\n4. What each device received (herald.deliveries, read_committed)")
        let runEvents = Set(eventIds.map(\.1))
        var received: [String: [DeliveryRecord]] = [:]
        var tail = RecordTail(topic: topics.deliveries, bootstrapServers: bootstrapServers)
        tail.extra = kafkaProperties
        for try await message in tail.records(logger: logger) {
            guard let value = message.value, let record = try? DeliveryRecord.decode(value),
                runEvents.contains(record.eventId)
            else { continue }
            received[record.registrationId, default: []].append(record)
        }
        for (id, device) in devicesById.sorted(by: { $0.value.name < $1.value.name }) {
            say("   \(device.name)")
            let records = (received[id] ?? []).sorted { $0.eventId < $1.eventId }
            if records.isEmpty { say("      (nothing)") }
            for record in records {
                let short = record.eventId.replacingOccurrences(of: "bn-\(runId)-", with: "")
                let fallbacks =
                    record.fallbacks.isEmpty ? "" : "  (no News_French_CA: fell back to \(record.fallbacks.joined(separator: ", ")))"
                say("      \(short): \(record.payload)\(fallbacks)")
            }
        }
        let total = received.values.reduce(0) { $0 + $1.count }
        say("\n   \(total) delivery records for \(runEvents.count) events, each with a deterministic deliveryId.")

        try await receiptsStory(runEvents: runEvents, expected: total, devicesById: devicesById, runId: runId)
        try await scheduledStory(runId: runId)
        let heldForSal = try await secondHubStory(runId: runId)
        try await testSendStory(runId: runId, devicesById: devicesById)
        try await correctionStory(runId: runId, devicesById: devicesById)
        try await breakingStory(runId: runId)
        try await quietHoursEndStory(heldForSal)
    }

    /// What the sports hub held for Sal's quiet hours: when they end, and the releases then.
    struct HeldForQuietHours {
        var releaseAt: Date
        /// The release of each sports alert held for Sal, by its text.
        var releases: [(text: String, id: String)]
    }

    /// Sal's quiet hours end: the scheduler releases the sports alerts they held, and the hub's
    /// frequency cap (one alert an hour) lets one of the two reach Sal.
    private func quietHoursEndStory(_ held: HeldForQuietHours) async throws {
        say("\n11. Sal's quiet hours end at \(Self.utcClock(held.releaseAt)) UTC: the scheduler releases what they held")
        let wait = held.releaseAt.timeIntervalSinceNow
        if wait > 0 {
            say("   (waiting \(Int(wait.rounded(.up))) s for \(Self.utcClock(held.releaseAt)) UTC)")
            try await Task.sleep(for: .seconds(wait))
        }
        let operatorAPI = client.authorized(sas(manage))
        let newsroom = client.authorized(sas(try await hubKey("DefaultFullSharedAccessSignature", operatorAPI)))
        var delivered = 0
        for (text, id) in held.releases {
            // `#` travels as `%23` in the path.
            let status = try await waitForStatus(
                id.replacingOccurrences(of: "#", with: "%23"), path: "/v1/hubs/sports/notifications/", api: newsroom
            ) { $0.state == .completed || $0.state == .cancelled }
            let reasons = (status.skippedReasons ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
            say(
                "   \(id) (\"\(text)\")  \(status.state.rawValue): \(status.targets.total) deliveries\(reasons.isEmpty ? "" : ", skipped \(status.skipped) (\(reasons.joined(separator: ", ")))")"
            )
            var tail = RecordTail(topic: topics.deliveries, bootstrapServers: bootstrapServers)
            tail.extra = kafkaProperties
            tail.eventId = id
            for try await message in tail.records(logger: logger) {
                guard let value = message.value, let record = try? DeliveryRecord.decode(value), record.eventId == id else { continue }
                say("      Sal's iPhone (hub sports, released): \(record.payload)")
                delivered += 1
            }
        }
        say(
            delivered == 1
                ? "   Sal wakes up to one alert: the hub's cap of one alert an hour held back the other."
                : "   Sal's iPhone received \(delivered) of the \(held.releases.count) held alerts.")
    }

    /// Breaking news jumps the queue: the sports app's weekly digest (`bulk`) is being fanned out
    /// to its fans when the news app's breaking alert comes in; the alert completes first, and the
    /// digest goes on where it was.
    private func breakingStory(runId: String) async throws {
        say("\n10. Breaking news jumps the queue: a bulk digest to \(Self.digestAudience) sports fans, then a breaking alert")
        // The fans register through the registrations log, as the API writes registrations.
        recordPushes(false)
        var producerConfiguration = RegistrationLog.producerConfiguration(bootstrapServers: bootstrapServers)
        producerConfiguration.lingerMs = 20
        producerConfiguration.extra = kafkaProperties
        let producer = try KafkaProducer(configuration: producerConfiguration, logger: logger)
        let hub = HubName("sports")!
        for index in 0..<Self.digestAudience {
            let registration = Registration(
                registrationId: "fan-\(runId)-\(index)", platform: .apns, handle: String(format: "%064x", 0x5C00_0000 + index),
                tags: ["Digest"], template: RegistrationTemplate(name: "digest", body: #"{"aps":{"alert":"$(digest)"}}"#), version: 1,
                hub: hub)
            try producer.enqueue(
                RegistryChange.registration(IndexedRegistration(registration)).outgoingMessage(topic: registrationsTopic, hub: hub))
        }
        try await producer.flush()
        await producer.shutdown()
        let operatorAPI = client.authorized(sas(manage))
        let newsroom = client.authorized(sas(try await hubKey("DefaultFullSharedAccessSignature", operatorAPI)))
        let digest: [String: Any] = [
            "id": "digest-\(runId)", "tags": "Digest", "urgency": "bulk", "properties": ["digest": "Your week in sport"],
        ]
        // Indexed once a rehearsal counts them all.
        var indexed = 0
        for _ in 0..<600 where indexed < Self.digestAudience {
            let rehearsal = try await newsroom.send("POST", "/v1/hubs/sports/notifications?dryRun=true", body: client.json(digest))
            if rehearsal.status == 200, let answer = try JSONSerialization.jsonObject(with: rehearsal.body) as? [String: Any],
                let status = answer["status"] as? [String: Any], let targets = status["targets"] as? [String: Any]
            {
                indexed = targets["total"] as? Int ?? 0
            }
            if indexed < Self.digestAudience { try await Task.sleep(for: .milliseconds(200)) }
        }
        say("   \(Self.digestAudience) fans registered through the registrations log; a rehearsal counts \(indexed)")
        let bulk = try await newsroom.send("POST", "/v1/hubs/sports/notifications", body: client.json(digest))
        guard bulk.status == 202 else { throw HTTPClientError(message: "digest: \(bulk.status) \(bulk.text)") }
        let bulkSent = Date()
        // The breaking alert comes in right behind it, while the digest is being fanned out.
        let breakingId = "bn-\(runId)-breaking"
        let alert: [String: Any] = [
            "id": breakingId, "tags": "World", "urgency": "breaking",
            "properties": [
                "News_English": "Breaking: earthquake off the coast", "News_French": "Urgent : séisme au large", "News_Mandarin": "突发：近海地震",
            ],
        ]
        let sent = try await client.authorized(sas(send)).send("POST", "/v1/notifications", body: client.json(alert))
        guard sent.status == 202 else { throw HTTPClientError(message: "breaking: \(sent.status) \(sent.text)") }
        say(
            "   digest-\(runId) (urgency bulk) -> 202; \(Int((Date().timeIntervalSince(bulkSent) * 1_000).rounded())) ms later \(breakingId) (urgency breaking) -> 202"
        )
        let breaking = try await waitForStatus(breakingId)
        let bulkDone = try await waitForStatus("digest-\(runId)", path: "/v1/hubs/sports/notifications/", api: newsroom)
        guard let breakingAt = breaking.timings.completedAt, let bulkAt = bulkDone.timings.completedAt else { return }
        let milliseconds = { (date: Date, since: Date) in Int((date.timeIntervalSince(since) * 1_000).rounded()) }
        say(
            "   \(breakingId)  \(breaking.state.rawValue) \(breaking.timings.durationMs.map { "in \($0) ms" } ?? ""): \(breaking.targets.total) deliveries"
        )
        say(
            "   digest-\(runId)  \(bulkDone.state.rawValue) \(milliseconds(bulkAt, breakingAt)) ms later: \(bulkDone.targets.total) deliveries, one per fan"
        )
        say(
            bulkAt > breakingAt
                ? "   The breaking alert overtook the digest: bulk lanes pause between pages while breaking work runs, then go on where they were."
                : "   The digest finished before the breaking alert (this machine fanned it out faster than the alert arrived)."
        )
    }

    static let digestAudience = 30_000

    /// A correction: the alert sent at the end of chapter 8 was wrong. The newsroom corrects it;
    /// the new text goes to exactly the devices the alert reached and replaces it on their lock
    /// screens (the local APNs and FCM servers' requests, read as a device shows them).
    private func correctionStory(runId: String, devicesById: [String: DemoDevice]) async throws {
        say("\n9. The alert was wrong: correct it on the lock screens it reached (POST /v1/notifications/{id}/corrections)")
        let id = "bn-\(runId)-tested"
        let names = ["Kenji's iPhone", "Léa's Android"]
        let watched = devicesById.values.filter { device in names.contains { device.name.hasPrefix($0) } }.sorted { $0.name < $1.name }
        func shown(_ device: DemoDevice) -> [String] {
            lockScreen(device.platform, device.handle).filter { text in
                ["reaches a deal", "accord au sommet", "without a deal", "sans accord"].contains { text.contains($0) }
            }
        }
        // The original reaches the phones first (the sender pushes it after the fan-out).
        for _ in 0..<300 where !watched.allSatisfy({ !shown($0).isEmpty }) { try await Task.sleep(for: .milliseconds(100)) }
        for device in watched { say("   before: \(device.name) shows \(shown(device).joined(separator: " | "))") }
        let english = "Correction: the summit ends without a deal"
        let body: [String: Any] = [
            "properties": [
                "News_English": english, "News_French": "Rectificatif : le sommet s'achève sans accord", "News_Mandarin": "更正：峰会未达成协议",
            ],
            "native": ["apns": ["aps": ["alert": english, "category": "NEWS_CATEGORY"]]],
            "reason": "the summit ended without a deal",
        ]
        let reply = try await client.authorized(sas(send)).send("POST", "/v1/notifications/\(id)/corrections", body: client.json(body))
        guard reply.status == 202, let answer = try JSONSerialization.jsonObject(with: reply.body) as? [String: Any],
            let correctionId = answer["id"] as? String
        else { throw HTTPClientError(message: "correction: \(reply.status) \(reply.text)") }
        say("   correction -> 202, id \(correctionId)")
        let original = try await waitForStatus(id)
        let status = try await waitForStatus(correctionId)
        say(
            "   \(correctionId)  \(status.state.rawValue), correcting \(status.correctionOf ?? "?"): \(status.targets.total) deliveries to the \(original.targets.total) devices the alert reached, read from its delivery records"
        )
        for _ in 0..<300 where !watched.allSatisfy({ shown($0).contains { $0.contains("sans accord") || $0.contains(english) } }) {
            try await Task.sleep(for: .milliseconds(100))
        }
        for device in watched {
            let alerts = shown(device)
            let outcome = alerts.count == 1 ? "replaced, not added" : "\(alerts.count) alerts"
            say("   after:  \(device.name) shows \(alerts.joined(separator: " | "))  (\(outcome))")
        }
    }

    /// A test send: the next alert goes to the newsroom's test iPhone and to Alice's devices
    /// first, rendered as the real send will be, under a test id of its own; the real send then
    /// takes the event's id.
    private func testSendStory(runId: String, devicesById: [String: DemoDevice]) async throws {
        say("\n8. Rehearse, then test on the newsroom's own devices, then send for real under the same id")
        guard let testPhone = devicesById.first(where: { $0.value.name.hasPrefix("Newsroom test iPhone") })?.key else { return }
        let id = "bn-\(runId)-tested"
        var body = DemoEvents.event(
            id: id, tags: "World || Technology || Politics", english: "Breaking: the summit reaches a deal",
            french: "Dernière minute : accord au sommet", mandarin: "突发：峰会达成协议")
        let api = client.authorized(sas(send))
        let rehearsal = try await api.send("POST", "/v1/notifications?dryRun=true", body: client.json(body))
        guard rehearsal.status == 200, let rehearsed = try JSONSerialization.jsonObject(with: rehearsal.body) as? [String: Any],
            let counts = rehearsed["status"] as? [String: Any], let targets = counts["targets"] as? [String: Any],
            let previews = rehearsed["previews"] as? [[String: Any]]
        else { throw HTTPClientError(message: "rehearsal: \(rehearsal.status) \(rehearsal.text)") }
        let byPlatform = (targets["byPlatform"] as? [String: Int] ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
        say(
            "   rehearsal (dryRun): \(targets["total"] as? Int ?? 0) devices would get it (\(byPlatform.joined(separator: ", "))), \(counts["skipped"] as? Int ?? 0) skipped, \(previews.count) renditions previewed, nothing delivered"
        )
        for preview in previews.prefix(3) {
            say(
                "      \(preview["platform"] ?? "?") \(preview["template"] ?? "?"): \(preview["bytes"] ?? 0) of \(preview["limit"] ?? 0) bytes"
            )
        }
        body["testRecipients"] = [testPhone, "$UserId:alice"]
        let reply = try await api.send("POST", "/v1/notifications", body: client.json(body))
        guard reply.status == 202, let answer = try JSONSerialization.jsonObject(with: reply.body) as? [String: Any],
            let testId = answer["id"] as? String
        else { throw HTTPClientError(message: "test send: \(reply.status) \(reply.text)") }
        say("   test send to the newsroom test iPhone (\(testPhone)) and $UserId:alice -> 202, id \(testId)")
        let tested = try await waitForStatus(testId)
        let names = try await deliveries(of: testId).map { devicesById[$0.registrationId]?.name ?? $0.registrationId }
        say(
            "   \(testId)  \(tested.state.rawValue), test: \(tested.targets.total) deliveries, to \(names.sorted().joined(separator: " and "))"
        )
        body["testRecipients"] = nil
        let real = try await api.send("POST", "/v1/notifications", body: client.json(body))
        guard real.status == 202 else { throw HTTPClientError(message: "real send: \(real.status) \(real.text)") }
        let status = try await waitForStatus(id)
        say("   \(id)  \(status.state.rawValue): \(status.targets.total) deliveries: the test did not take the id")
    }

    /// The committed delivery records of `eventId`.
    private func deliveries(of eventId: String) async throws -> [DeliveryRecord] {
        var tail = RecordTail(topic: topics.deliveries, bootstrapServers: bootstrapServers)
        tail.extra = kafkaProperties
        tail.eventId = eventId
        var records: [DeliveryRecord] = []
        for try await message in tail.records(logger: logger) {
            if let value = message.value, let record = try? DeliveryRecord.decode(value), record.eventId == eventId {
                records.append(record)
            }
        }
        return records
    }

    /// A second app in the same deployment: the operator creates the sports app's hub, its
    /// devices register with the hub's own key, and its newsroom sends through Azure
    /// Notification Hubs' REST protocol with the hub's connection string; the news app's
    /// devices get nothing of it. The hub has a frequency cap of one alert an hour per device, so
    /// its second alert is held back from both devices. Sal's phone is in its quiet hours: both
    /// alerts are held for Sal until they end (chapter 11).
    private func secondHubStory(runId: String) async throws -> HeldForQuietHours {
        say("\n7. A second app in the same deployment: the sports hub, with its own keys and devices")
        let operatorAPI = client.authorized(sas(manage))
        let created = try await operatorAPI.send(
            "PUT", "/v1/hubs/sports", body: Data(#"{"frequencyCaps":[{"maxAlerts":1,"windowSeconds":3600}]}"#.utf8))
        guard created.status == 201 || created.status == 200 else {
            throw HTTPClientError(message: "PUT /v1/hubs/sports: \(created.status) \(created.text)")
        }
        say(
            "   operator: PUT /v1/hubs/sports -> \(created.status) (policies DefaultListenSharedAccessSignature, DefaultFullSharedAccessSignature; frequency cap: 1 alert an hour per device)"
        )
        let listenKey = try await hubKey("DefaultListenSharedAccessSignature", operatorAPI)
        let fullKey = try await hubKey("DefaultFullSharedAccessSignature", operatorAPI)
        say(
            "   connection string: \(HubDefinition.connectionString(hubResource: hubURI, policy: "DefaultFullSharedAccessSignature", key: "<key>"))"
        )
        let device = client.authorized(sas((name: "DefaultListenSharedAccessSignature", key: listenKey.key)))
        var sportsDevices: [String: String] = [:]
        // Sal is asleep: quiet hours from an hour ago until the first whole minute at least 20 s
        // away (quiet hours are kept to the minute), in UTC, so the story can show Sal waking up.
        let now = Date()
        let wakeUp = Date(timeIntervalSince1970: ((now.timeIntervalSince1970 + 20) / 60).rounded(.up) * 60)
        let quiet = "\(Self.utcClock(now.addingTimeInterval(-3_600)))-\(Self.utcClock(wakeUp))"
        let end = QuietHours(quiet)?.end(ifQuietAt: now, in: TimeZone(identifier: "UTC")!) ?? wakeUp
        let phones = [
            ("Sam's iPhone", String(repeating: "5a", count: 32), nil), ("Sue's iPhone", String(repeating: "5b", count: 32), nil),
            ("Sal's iPhone", String(repeating: "5c", count: 32), quiet),
        ]
        for (name, handle, quietHours) in phones {
            let installationId = "sports-\(runId)-\(name.prefix(3).lowercased())"
            var body: [String: Any] = [
                "installationId": installationId, "platform": "apns", "pushChannel": handle, "tags": ["Football"],
                "templates": ["score": ["body": #"{"aps":{"alert":"$(score)"}}"#]],
            ]
            if let quietHours {
                body["timeZone"] = "UTC"
                body["quietHours"] = quietHours
            }
            let put = try await device.send("PUT", "/sports/installations/\(installationId)?api-version=2020-06", body: device.json(body))
            guard put.status == 200 else { throw HTTPClientError(message: "PUT /sports/installations: \(put.status) \(put.text)") }
            sportsDevices["\(installationId):score"] = name
            say(
                "   \(name): PUT /sports/installations/\(installationId) with the hub's listen key -> 200\(quietHours.map { " (quiet hours \($0) UTC)" } ?? "")"
            )
        }
        let wrongHub = try await device.send("POST", "/v1/registrationIDs")
        say("   the sports listen key on the news app's routes -> \(wrongHub.status)")

        let newsroom = client.authorized(sas((name: "DefaultFullSharedAccessSignature", key: fullKey.key)))
        let sent = try await newsroom.send(
            "POST", "/sports/messages?api-version=2020-06", body: Data(#"{"score":"Goal! 1-0 in the 89th minute"}"#.utf8),
            headers: ["ServiceBusNotification-Format": "template", "ServiceBusNotification-Tags": "Football"])
        guard sent.status == 201, let location = sent.header("Location"),
            let id = location.split(separator: "/").last?.split(separator: "?").first
        else {
            throw HTTPClientError(message: "POST /sports/messages: \(sent.status) \(sent.text)")
        }
        say("   sports newsroom: POST /sports/messages (Azure's protocol, tags Football) -> 201, Location \(location)")
        let status = try await waitForStatus(String(id), path: "/v1/hubs/sports/notifications/", api: newsroom)
        say("   \(id)  \(status.state.rawValue): \(status.targets.total) deliveries in hub sports")
        if let held = status.skippedReasons?["held_quiet"] {
            say(
                "      held for quiet hours: \(held) (Sal's iPhone); the scheduler releases it to Sal at \(Self.utcClock(end)) UTC as \(QuietRelease.eventId(of: String(id), releaseAt: end))"
            )
        }
        var tail = RecordTail(topic: topics.deliveries, bootstrapServers: bootstrapServers)
        tail.extra = kafkaProperties
        tail.eventId = String(id)
        for try await message in tail.records(logger: logger) {
            guard let value = message.value, let record = try? DeliveryRecord.decode(value), record.eventId == String(id) else { continue }
            say("      \(sportsDevices[record.registrationId] ?? record.registrationId) (hub \(record.hub)): \(record.payload)")
        }
        say("   The news app's devices received nothing of it: each hub's devices, keys and events are its own.")

        // A second alert within the hour: the cap holds it back from both devices.
        let again = try await newsroom.send(
            "POST", "/sports/messages?api-version=2020-06", body: Data(#"{"score":"Full time: 1-0"}"#.utf8),
            headers: ["ServiceBusNotification-Format": "template", "ServiceBusNotification-Tags": "Football"])
        guard again.status == 201, let secondId = again.header("Location")?.split(separator: "/").last?.split(separator: "?").first
        else {
            throw HTTPClientError(message: "POST /sports/messages: \(again.status) \(again.text)")
        }
        let capped = try await waitForStatus(String(secondId), path: "/v1/hubs/sports/notifications/", api: newsroom)
        let reasons = (capped.skippedReasons ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        say(
            "   \(secondId) (\"Full time: 1-0\")  \(capped.state.rawValue): \(capped.targets.total) deliveries, skipped \(capped.skipped) (\(reasons)): Sam and Sue had their alert this hour, Sal is asleep"
        )
        return HeldForQuietHours(
            releaseAt: end,
            releases: [
                ("Goal! 1-0 in the 89th minute", QuietRelease.eventId(of: String(id), releaseAt: end)),
                ("Full time: 1-0", QuietRelease.eventId(of: String(secondId), releaseAt: end)),
            ])
    }

    /// `HH:MM` of `date` in UTC.
    static func utcClock(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.hour, .minute], from: date)
        return String(format: "%02d:%02d", parts.hour ?? 0, parts.minute ?? 0)
    }

    private func hubKey(_ policy: String, _ operatorAPI: HeraldHTTPClient) async throws -> (name: String, key: String) {
        let reply = try await operatorAPI.send("POST", "/v1/hubs/sports/policies/\(policy)/keys")
        guard reply.status == 200, case .string(let key)? = try JSONValue.parse(Array(reply.body))["primaryKey"] else {
            throw HTTPClientError(message: "POST /v1/hubs/sports/policies/\(policy)/keys: \(reply.status) \(reply.text)")
        }
        return (policy, key)
    }

    /// The sender role's side: one receipt per delivery on `herald.receipts`, and the counts
    /// in the status.
    private func receiptsStory(runEvents: Set<String>, expected: Int, devicesById: [String: DemoDevice], runId: String) async throws {
        say("\n5. The sender role pushes them: APNs over HTTP/2 with a provider token, FCM HTTP v1 with an OAuth token,")
        say("   Web Push encrypted for each browser and signed with VAPID, WNS with an OAuth token (local servers that speak")
        say("   the four protocols stand in for Apple, Google, the browsers' push services and Microsoft); one receipt each")
        var receipts: [String: [PushReceipt]] = [:]
        for _ in 0..<300 {
            receipts = [:]
            var tail = RecordTail(topic: topics.receipts, bootstrapServers: bootstrapServers)
            tail.extra = kafkaProperties
            for try await message in tail.records(logger: logger) {
                guard let value = message.value, let receipt = try? JSONDecoder().decode(PushReceipt.self, from: Data(value)),
                    runEvents.contains(receipt.eventId)
                else { continue }
                receipts[receipt.registrationId, default: []].append(receipt)
            }
            if receipts.values.reduce(0, { $0 + $1.count }) >= expected { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        for (id, device) in devicesById.sorted(by: { $0.value.name < $1.value.name }) {
            let mine = (receipts[id] ?? []).sorted { $0.eventId < $1.eventId }
            guard !mine.isEmpty else { continue }
            say("   \(device.name)")
            for receipt in mine {
                let short = receipt.eventId.replacingOccurrences(of: "bn-\(runId)-", with: "")
                let detail = [
                    receipt.statusCode.map { "HTTP \($0)" }, "\(receipt.attempts) attempt\(receipt.attempts == 1 ? "" : "s")",
                    receipt.latencyMs.map { "\($0) ms" }, receipt.reason,
                ].compactMap { $0 }.joined(separator: ", ")
                say("      \(short): \(receipt.outcome.rawValue) (\(detail))")
            }
        }
        for text in browserInbox() { say("   \(DemoDevices.browserName) decrypted: \(text)") }
        let count = receipts.values.reduce(0) { $0 + $1.count }
        say("   \(count) receipts for \(expected) deliveries; GET /v1/notifications/{id} counts them per platform and outcome.")
        // One alert's reach: from its publish to its deliveries committed and sent.
        let world = "bn-\(runId)-world"
        let status = try await waitForStatus(world) { $0.reach?.sent?.allMs != nil || $0.pushReceiptCount >= $0.targets.total }
        if let reach = status.reach {
            func curve(_ curve: ReachCurve?) -> String {
                guard let curve else { return "-" }
                return [("first", curve.firstMs), ("half", curve.p50Ms), ("90%", curve.p90Ms), ("all", curve.allMs)]
                    .map { "\($0.0) \($0.1.map { "\($0) ms" } ?? "not reached")" }.joined(separator: ", ")
            }
            say("   The reach of \(world) (\(status.targets.total) deliveries), from its publish:")
            say("      committed: \(curve(reach.committed))")
            say("      sent:      \(curve(reach.sent))")
        }
        // The readers' side: their apps report opens and dismissals, each device once.
        let app = client.authorized(sas(listen))
        let readers = devicesById.filter {
            $0.value.name.hasPrefix("Kenji") || $0.value.name.hasPrefix("Wei") || $0.value.name.hasPrefix("Amélie")
        }
        for (id, device) in readers.sorted(by: { $0.value.name < $1.value.name }) {
            let action = device.name.hasPrefix("Amélie") ? "dismissed" : "opened"
            for _ in 0..<2 {
                let reply = try await app.send(
                    "POST", "/v1/notifications/\(world)/engagements", body: client.json(["action": action, "registrationId": id]))
                guard reply.status == 202 else { throw HTTPClientError(message: "engagement: \(reply.status) \(reply.text)") }
            }
        }
        let funnel = try await waitForStatus(world) { $0.engagement != nil }
        if let engagement = funnel.engagement {
            let sent = funnel.push?.values.reduce(0) { $0 + ($1["sent"] ?? 0) } ?? 0
            say(
                "   The readers' apps report opens (each twice, counted once): delivered \(funnel.targets.total) -> sent \(sent) -> opened \(engagement.opened), dismissed \(engagement.dismissed)"
                    + (engagement.openRate.map { String(format: ", open rate %.0f %%", $0 * 100) } ?? ""))
        }
    }

    /// A story scheduled a few seconds ahead (`sendAt`): accepted as `scheduled`, released by
    /// the scheduler role at its time, then fanned out like any event.
    private func scheduledStory(runId: String) async throws {
        say("\n6. A story scheduled 3 seconds ahead (sendAt), released by the scheduler role")
        let sendAt = Date().addingTimeInterval(3)
        let id = "bn-\(runId)-scheduled"
        var body = DemoEvents.event(
            id: id, tags: "World", english: "Embargo lifted: the report is out", french: "Fin de l'embargo : le rapport est publié",
            mandarin: "禁令解除：报告发布")
        body["sendAt"] = ISO8601Timestamp.format(sendAt)
        let api = client.authorized(sas(send))
        let reply = try await api.send("POST", "/v1/notifications", body: client.json(body))
        guard reply.status == 202 else { throw HTTPClientError(message: "publish scheduled: \(reply.status) \(reply.text)") }
        say(
            "   \(id): tags World, sendAt \(ISO8601Timestamp.format(sendAt)) -> 202 \(reply.text.contains("\"scheduled\"") ? "scheduled" : reply.text)"
        )
        let status = try await waitForStatus(id, timeout: 30) { $0.state == .completed || $0.state == .expired || $0.state == .rejected }
        let late = status.timings.publishedAt.map { Int(($0.timeIntervalSince(sendAt) * 1_000).rounded()) }
        say(
            "   \(id)  \(status.state.rawValue): released \(late.map { "\($0) ms after its time" } ?? "-"), \(status.targets.total) deliveries"
        )
    }

    private func waitUntilReady() async throws {
        for _ in 0..<300 {
            if let reply = try? await client.send("GET", "/health/ready"), reply.status == 200 { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw HTTPClientError(message: "the API did not become ready within 30 s")
    }

    private func register(_ device: DemoDevice) async throws -> String {
        let authorization: String
        switch device.registrar {
        case .device: authorization = sas(listen)
        case .user(let user):
            authorization = "Bearer " + (try await UserToken.make(user: user, key: userTokenKey, expiry: Date().addingTimeInterval(3600)))
        }
        let api = client.authorized(authorization)
        let created = try await api.send("POST", "/v1/registrationIDs")
        guard created.status == 201, let location = created.header("Location"),
            let id = location.split(separator: "/").last.map(String.init)
        else {
            throw HTTPClientError(message: "POST /v1/registrationIDs: \(created.status) \(created.text)")
        }
        var body: [String: Any] = ["platform": device.platform, "tags": device.tags]
        if let subscription = device.subscription { body["subscription"] = subscription } else { body["handle"] = device.handle }
        if let tokenKind = device.tokenKind { body["tokenKind"] = tokenKind }
        if let template = device.template { body["template"] = template }
        let put = try await api.send("PUT", "/v1/registrations/\(id)", body: api.json(body))
        guard put.status == 200 || put.status == 201 else {
            throw HTTPClientError(message: "PUT /v1/registrations/\(id) for \(device.name): \(put.status) \(put.text)")
        }
        return id
    }

    private func waitForStatus(
        _ id: String, timeout: Int = 60, path: String = "/v1/notifications/", api: HeraldHTTPClient? = nil,
        until done: (StatusRecord) -> Bool = { $0.state.isTerminal }
    ) async throws -> StatusRecord {
        let api = api ?? client.authorized(sas(send))
        for _ in 0..<(timeout * 10) {
            let reply = try await api.send("GET", path + id)
            if reply.status == 200 {
                let status = try JSONDecoder().decode(StatusRecord.self, from: reply.body)
                if done(status) { return status }
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw HTTPClientError(message: "event \(id) did not complete within \(timeout) s")
    }
}

/// Writes a line to stdout at once (print is block-buffered when stdout is a file, and a
/// script watching the story must see each line as it happens).
private func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
