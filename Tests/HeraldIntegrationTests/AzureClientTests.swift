import Foundation
import HeraldAPI
import HeraldApp
import HeraldDomain
import HeraldLocalPush
import HeraldStreams
import HeraldTestSupport
import Testing

/// Herald's Azure Notification Hubs routes driven by a client none of us wrote:
/// azure-notification-hub-unofficial from PyPI (a port of Microsoft's Node SDK), unmodified,
/// given only connection strings that point at Herald. Two hubs with their own keys in one
/// stack, the real `herald api` and `herald worker` (sender included, against the local APNs and
/// FCM servers), checked through to delivery records and receipts.
@Suite(
    "an Azure Notification Hubs client against Herald", .heavy, .serialized,
    .enabled(if: HeraldBinary.isBuilt, "build the herald executable first"))
final class AzureClientTests {
    let stack: LocalPushStack
    let prefix = TestBroker.uniqueName("azc")
    let full = (name: "Full", key: "full-key-for-the-azure-client-tests-0001")

    init() async throws { stack = try await LocalPushStack() }

    var redis: TestRedis { stack.redis }
    var broker: TestBroker { stack.broker }
    var push: LocalPushServices { stack.push }
    var base: URL { stack.base }
    var processes: [HeraldBinary.Running] { stack.processes }

    var topics: HeraldTopics { HeraldTopics.prefixed(prefix) }
    var api: HeraldHTTPClient { .signed(base, full) }

    func environment() -> [String: String] {
        [
            "HERALD_KAFKA_BROKERS": broker.bootstrapServers, "HERALD_REDIS_URL": redis.url,
            "HERALD_TOPIC_PREFIX": prefix + ".herald.", "HERALD_REDIS_PREFIX": prefix, "HERALD_SLOTS": "16",
            "HERALD_INSTANCE_ID": prefix, "HERALD_SESSION_TIMEOUT_MS": String(TestBroker.sessionTimeoutMs), "HERALD_METRICS_PORT": "0",
            "HERALD_API_HOST": "127.0.0.1", "HERALD_API_PORT": String(base.port!), "HERALD_HUB_URI": base.absoluteString,
            "HERALD_POLICIES": "\(full.name):listen+send+manage:\(full.key)",
            "HERALD_ID_SECRET": "id-secret-for-the-azure-client-tests-01", "HERALD_LOG_LEVEL": "notice",
            "HERALD_ROLES": "planner,fanout,indexer,scheduler,sender",
            // A test send's answer waits for its receipts; on a loaded machine they take longer
            // than the default 15 s, and the wait ends as soon as they are in.
            "HERALD_TEST_SEND_WAIT_SECONDS": "300",
        ].merging(push.environment) { $1 }
    }

    /// Runs one scenario of azure_client.py with `connection` and returns what it printed.
    func client(_ connection: String, hub: String, _ scenario: String, _ extra: [String] = []) async throws -> JSONValue {
        let python = ToolPaths.repositoryRoot.appendingPathComponent(".herald/azure-client/bin/python").path
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("azure_client.py").path
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw TestServerError(message: "no Azure client at \(python): run scripts/bootstrap (make test does)")
        }
        let run = try HeraldBinary.start([script, connection, hub, scenario] + extra, executable: python)
        _ = await run.exited(within: 600)
        guard run.process.terminationStatus == 0, let line = run.stdout().split(separator: "\n").last else {
            throw TestServerError(message: "azure_client.py \(scenario) failed:\n\(run.stderr().suffix(3_000))")
        }
        return try JSONValue.parse(Array(line.utf8))
    }

    /// The connection string of a hub's policy, as `POST …/keys` gives it, with the scheme the
    /// client should use for a plain-HTTP Herald (the client turns `sb://` into `https://`).
    func connectionString(hub: String, policy: String = "DefaultFullSharedAccessSignature") async throws -> String {
        let reply = try await api.send("POST", "/v1/hubs/\(hub)/policies/\(policy)/keys")
        #expect(reply.status == 200, "\(reply.text)")
        guard case .string(let text)? = try JSONValue.parse(Array(reply.body))["primaryConnectionString"] else {
            throw TestServerError(message: "no connection string: \(reply.text)")
        }
        return text.replacingOccurrences(of: "Endpoint=sb://", with: "Endpoint=http://")
    }

    func deliveries(of eventId: String) async throws -> [DeliveryRecord] {
        var tail = RecordTail(topic: topics.deliveries, bootstrapServers: broker.bootstrapServers)
        tail.eventId = eventId
        var found: [DeliveryRecord] = []
        for try await message in tail.records() {
            guard let value = message.value else { continue }
            found.append(try DeliveryRecord.decode(value))
        }
        return found.filter { $0.eventId == eventId }
    }

    func receipts(of eventId: String) async throws -> [PushReceipt] {
        var tail = RecordTail(topic: topics.receipts, bootstrapServers: broker.bootstrapServers)
        tail.eventId = eventId
        var found: [PushReceipt] = []
        for try await message in tail.records() {
            guard let value = message.value else { continue }
            found.append(try JSONDecoder().decode(PushReceipt.self, from: Data(value)))
        }
        return found.filter { $0.eventId == eventId }
    }

    @Test(
        "two hubs, each through its own connection string: installations, Atom registrations, template and native sends to tag expressions, telemetry, a schedule cancelled"
    )
    func twoHubsThroughTheAzureClient() async throws {
        try stack.start(["worker"], environment: environment())
        try stack.start(["api"], environment: environment())
        let processes = processes
        try await api.waitUntilReady(attempts: 600) { processes.map { String($0.stderr().suffix(2_000)) }.joined() }
        for hub in ["news", "sports"] {
            #expect(try await api.send("PUT", "/v1/hubs/\(hub)").status == 201)
        }
        let news = try await connectionString(hub: "news")
        let sports = try await connectionString(hub: "sports")

        for (hub, connection) in [("news", news), ("sports", sports)] {
            let devices = try await client(connection, hub: hub, "devices")
            #expect(devices["iphone"]?["platform"] == .string("apns"))
            #expect(devices["iphone"]?["templates"]?["news"]?["tags"] == .array([.string("Alerts")]))
            #expect(devices["pixel"]?["platform"] == .string("fcmv1"))
            #expect(devices["pixel"]?["tags"] == .array([.string("World"), .string("Sports"), .string("Breaking")]))
            #expect(devices["gone"] == .number("404"))
        }
        // Each key opens its own hub only.
        let denied = try await client(news, hub: "sports", "denied")
        #expect(denied["status"] == .number("401"), "\(denied)")

        for (hub, connection) in [("news", news), ("sports", sports)] {
            try await checkSends(try await client(connection, hub: hub, "send"), hub: hub, connection: connection)
        }
        // Azure's test send: each answered with the outcome of every device it reached.
        for hub in ["news", "sports"] {
            let tested = try await client(hub == "news" ? news : sports, hub: hub, "testsend")
            for (name, device) in [("template", "\(hub)-iphone:news"), ("native", "\(hub)-ipad")] {
                let answer = tested[name]
                #expect(answer?["success"] == .number("1") && answer?["failure"] == .number("0"), "\(tested)")
                var result: JSONValue?
                if case .array(let results)? = answer?["results"] { result = results.count == 1 ? results[0] : nil }
                #expect(result?["RegistrationId"] == .string(device) && result?["ApplicationPlatform"] == .string("apple"), "\(tested)")
                #expect(result?["PnsHandle"] == .string(String(repeating: "ab", count: 32)), "\(tested)")
                #expect(
                    result?["Outcome"] == .string("The Notification was successfully sent to the Push Notification System"), "\(tested)")
            }
        }

        for (hub, connection) in [("news", news), ("sports", sports)] {
            try await checkRegistrations(try await client(connection, hub: hub, "registrations"), hub: hub)
        }

        // A schedule in one hub, cancelled there; and the deployment's own policy on the default hub.
        let scheduled = try await client(sports, hub: "sports", "schedule")
        guard case .string(let id)? = scheduled["notificationId"] else {
            Issue.record("no id for the scheduled send: \(scheduled)")
            return
        }
        try await waitWhileProgressing("the schedule of \(id)", interval: .milliseconds(200)) {
            () async throws -> ProgressCheck<Int, Void> in
            let reply = try await api.send("GET", "/v1/hubs/sports/notifications/\(id)")
            return reply.status == 200 ? .done(()) : .waiting(0)
        }
        #expect(try await client(news, hub: "news", "cancel", [id])["status"] == .number("404"), "not the news hub's")
        let cancelled = try await client(sports, hub: "sports", "cancel", [id])
        #expect(cancelled["status"] == .number("200"), "\(cancelled)")
        let status = try JSONValue.parse(Array(try await api.send("GET", "/v1/hubs/sports/notifications/\(id)").body))
        #expect(status["state"] == .string("cancelled"), "\(status)")
        let namespace = "Endpoint=\(base.absoluteString);SharedAccessKeyName=\(full.name);SharedAccessKey=\(full.key)"
        let plain = try await client(namespace, hub: "default", "schedule")
        #expect(plain["notificationId"] != nil, "\(plain)")
    }

    /// Waits for the sender's count of one `sent` APNs receipt of `id` (fails only when nothing
    /// moves for 2 min).
    func waitForOneSent(_ id: String, hub: String, what: String) async throws {
        let processes = processes
        try await waitWhileProgressing("the receipt of \(hub)'s \(what) \(id)", interval: .milliseconds(200)) {
            () async throws -> ProgressCheck<String, Void> in
            let reply = try await api.send("GET", "/v1/hubs/\(hub)/notifications/\(id)")
            let status = reply.status == 200 ? try JSONValue.parse(Array(reply.body)) : .null
            if status["push"]?["apns"]?["sent"] == .number("1") { return .done(()) }
            if processes.contains(where: { !$0.process.isRunning }) {
                throw TestServerError(message: "a Herald process ended: \(processes.map { $0.stderr().suffix(2_000) })")
            }
            return .waiting(reply.text)
        }
    }

    /// Atom registrations made as Azure's SDKs write them, read, listed and deleted by the
    /// client; a template send to a tag only the first has reaches it alone.
    func checkRegistrations(_ made: JSONValue, hub: String) async throws {
        guard case .string(let apple)? = made["apple"], case .string(let pixel)? = made["pixel"],
            case .string(let id)? = made["send"]?["notificationId"], case .array(let listed)? = made["listed"]
        else {
            Issue.record("the registrations scenario answered \(made)")
            return
        }
        #expect(listed.contains(.string(apple)) && listed.contains(.string(pixel)), "\(made)")
        let read = made["read"]
        // The entry's ETag is the registration's version, and the same in the entry's attribute.
        guard case .string(let version)? = read?["ETag"] else {
            Issue.record("no ETag in \(made)")
            return
        }
        #expect(read?["RegistrationId"] == .string(apple) && read?["etag"] == .string("W/\"\(version)\""), "\(made)")
        #expect(read?["DeviceToken"] == .string(String(repeating: "AB", count: 32)), "\(made)")
        #expect(read?["Tags"] == .array([.string("World"), .string("Registered")]) && read?["TemplateName"] == .string("azure"), "\(made)")
        #expect(made["gone"] == .number("404"), "\(made)")
        try await waitForOneSent(id, hub: hub, what: "send to an Atom registration")
        let records = try await deliveries(of: id)
        #expect(records.map(\.registrationId) == [apple] && records.first?.payload.contains("Registered (\(hub))") == true, "\(records)")
    }

    /// The template send reached the hub's template registration and the native one its native
    /// APNs registration: one delivery record and one `sent` receipt each, all of the hub.
    func checkSends(_ sent: JSONValue, hub: String, connection: String) async throws {
        for name in ["template", "native"] {
            guard case .string(let id)? = sent[name]?["notificationId"] else {
                Issue.record("no notification id for the \(name) send: \(sent)")
                continue
            }
            try await waitForOneSent(id, hub: hub, what: "\(name) send")
            let details = try await client(connection, hub: hub, "outcome", [id])
            #expect(details["state"] == .string("Completed"), "\(details)")
            #expect(details["counts"]?["ApnsOutcomeCounts"]?["Success"] == .number("1"), "\(details)")
            let records = try await deliveries(of: id)
            #expect(records.count == 1 && records.allSatisfy { $0.hub == HubName(hub) }, "\(records)")
            #expect(records.first?.registrationId == (name == "template" ? "\(hub)-iphone:news" : "\(hub)-ipad"))
            #expect(records.first?.payload.contains(hub) == true, "the hub's own text: \(records)")
            let pushed = try await receipts(of: id)
            #expect(pushed.map(\.outcome) == [.sent] && pushed.first?.hub == HubName(hub), "\(pushed)")
        }
    }
}
