import Foundation
import HeraldAPI
import HeraldApp
import HeraldDomain
import HeraldPush
import HeraldRedis
import HeraldRegistry
import HeraldStreams
import HeraldLocalPush
import HeraldTestSupport
import Testing

/// The sender role on the real processes (`herald api`, `herald worker`) against local APNs,
/// FCM, Web Push and WNS servers that speak the real protocols over HTTP/2 and TLS: every outcome, the
/// removal of unregistered registrations through the registry, expiry, and a sender
/// SIGKILLed mid-run.
@Suite("sender role on the real processes", .heavy, .serialized, .enabled(if: HeraldBinary.isBuilt, "build the herald executable first"))
final class SenderStackTests {
    let stack: LocalPushStack
    let prefix = TestBroker.uniqueName("snd")
    let full = (name: "Full", key: "full-key-for-the-sender-stack-tests-0001")

    init() async throws { stack = try await LocalPushStack() }

    var redis: TestRedis { stack.redis }
    var broker: TestBroker { stack.broker }
    var push: LocalPushServices { stack.push }
    var base: URL { stack.base }
    var processes: [HeraldBinary.Running] { stack.processes }

    var layout: SlotLayout { SlotLayout(slotCount: 16, prefix: prefix) }
    var topics: HeraldTopics { HeraldTopics.prefixed(prefix) }

    func environment(roles: String, instance: String) -> [String: String] {
        [
            "HERALD_KAFKA_BROKERS": broker.bootstrapServers, "HERALD_REDIS_URL": redis.url,
            "HERALD_TOPIC_PREFIX": prefix + ".herald.", "HERALD_REDIS_PREFIX": prefix, "HERALD_SLOTS": "16",
            "HERALD_INSTANCE_ID": instance, "HERALD_SESSION_TIMEOUT_MS": String(TestBroker.sessionTimeoutMs), "HERALD_METRICS_PORT": "0",
            "HERALD_API_HOST": "127.0.0.1", "HERALD_API_PORT": String(base.port!), "HERALD_HUB_URI": base.absoluteString,
            "HERALD_POLICIES": "\(full.name):listen+send+manage:\(full.key)",
            "HERALD_ID_SECRET": "id-secret-for-the-sender-stack-tests-001", "HERALD_LOG_LEVEL": "info", "HERALD_ROLES": roles,
        ].merging(push.environment) { $1 }
    }

    /// Starts the API and a worker with `roles`; waits until the API is ready.
    func startStack(roles: String) async throws {
        try stack.start(["worker"], environment: environment(roles: roles, instance: prefix))
        try stack.start(["api"], environment: environment(roles: roles, instance: prefix))
        let processes = processes
        try await api.waitUntilReady(attempts: 600) { processes.map { String($0.stderr().suffix(2_000)) }.joined() }
    }

    func startSender(extra: [String: String] = [:]) throws -> HeraldBinary.Running {
        try HeraldBinary.start(["worker"], environment: environment(roles: "sender", instance: prefix + "-sender").merging(extra) { $1 })
    }

    var api: HeraldHTTPClient { .signed(base, full) }

    static func apnsHandle(_ n: Int) -> String { String(repeating: String(format: "%02x", n), count: 32) }
    static func fcmHandle(_ name: String) -> String { "dev-\(name):APA91b" + String(repeating: "Q7x", count: 40) }

    /// Registers a device through the API (in `hub`'s routes when given); returns its registration id.
    func register(platform: String, handle: String, body: String, hub: String? = nil) async throws -> String {
        let routes = hub.map { "/v1/hubs/\($0)" } ?? "/v1"
        let id = String(
            try #require(try await api.send("POST", "\(routes)/registrationIDs").header("Location")?.split(separator: "/").last))
        let escaped = body.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        let json = #"{"platform":"\#(platform)","handle":"\#(handle)","tags":["World"],"template":{"name":"news","body":"\#(escaped)"}}"#
        let reply = try await api.send("PUT", "\(routes)/registrations/\(id)", body: Data(json.utf8))
        #expect(reply.status == 200, "\(reply.text)")
        return id
    }

    func registerAPNs(_ n: Int, hub: String? = nil) async throws -> String {
        try await register(platform: "apns", handle: Self.apnsHandle(n), body: #"{"aps":{"alert":"$(News_English)"}}"#, hub: hub)
    }

    func registerFCM(_ name: String, hub: String? = nil) async throws -> String {
        try await register(
            platform: "fcm", handle: Self.fcmHandle(name), body: #"{"message":{"notification":{"body":"$(News_English)"}}}"#, hub: hub)
    }

    /// The receipts of `eventId` on `herald.receipts`, once there are `count` distinct ones;
    /// fails only when no new receipt arrives for `stallLimit`.
    func receipts(of eventId: String, count: Int, stallLimit: Duration = .seconds(120), log: () -> String = { "" }) async throws
        -> [String: [PushReceipt]]
    {
        do {
            return try await waitWhileProgressing("\(count) receipts of \(eventId)", stallLimit: stallLimit, interval: .milliseconds(300)) {
                () async throws -> ProgressCheck<Int, [String: [PushReceipt]]> in
                var found: [String: [PushReceipt]] = [:]
                var tail = RecordTail(topic: topics.receipts, bootstrapServers: broker.bootstrapServers)
                tail.eventId = eventId
                for try await message in tail.records() {
                    guard let value = message.value else { continue }
                    let receipt = try JSONDecoder().decode(PushReceipt.self, from: Data(value))
                    found[receipt.deliveryId, default: []].append(receipt)
                }
                return found.count >= count ? .done(found) : .waiting(found.values.reduce(0) { $0 + $1.count })
            }
        } catch let stalled as StalledWait {
            throw TestServerError(message: "\(stalled)\n\(log())")
        }
    }

    /// The delivery records of `eventId` on the deliveries topic so far.
    func deliveries(of eventId: String) async throws -> [DeliveryRecord] {
        var tail = RecordTail(topic: topics.deliveries, bootstrapServers: broker.bootstrapServers)
        tail.eventId = eventId
        var found: [DeliveryRecord] = []
        for try await message in tail.records() {
            if let value = message.value { found.append(try DeliveryRecord.decode(value)) }
        }
        return found.filter { $0.eventId == eventId }
    }

    func publish(_ body: String) async throws {
        let reply = try await api.send("POST", "/v1/notifications", body: Data(body.utf8))
        #expect(reply.status == 202, "\(reply.text)")
    }

    func stderr() -> String { processes.map { String($0.stderr().suffix(4_000)) }.joined(separator: "\n---\n") }

    @Test(
        "every outcome through the running role: sent, retried then sent, rejected, unregistered (removed through the registry), a re-registration after the push kept, a WNS toast, a throttled WNS channel retried and an expired one; counts in the status"
    )
    func outcomes() async throws {
        try await startStack(roles: "planner,fanout,indexer,sender")
        let ok = try await registerAPNs(1)
        let gone = try await registerAPNs(2)
        let busy = try await registerAPNs(3)
        let wrongTopic = try await registerAPNs(4)
        let reRegistered = try await registerAPNs(5)
        let staleToken = try await registerAPNs(6)
        let fcmOK = try await registerFCM("ok")
        let fcmGone = try await registerFCM("gone")
        let fcmBad = try await registerFCM("bad")
        let fcmQuota = try await registerFCM("quota")
        let toast = #"<toast><visual><binding template="ToastText01"><text id="1">$(News_English)</text></binding></visual></toast>"#
        let windowsChannel = push.wns.openChannel()
        let windows = try await register(platform: "wns", handle: windowsChannel, body: toast)
        let expiredChannel = push.wns.openChannel()
        let windowsGone = try await register(platform: "wns", handle: expiredChannel, body: toast)
        push.wns.script(channel: expiredChannel, [.gone])
        let throttledChannel = push.wns.openChannel()
        let windowsThrottled = try await register(platform: "wns", handle: throttledChannel, body: toast)
        push.wns.script(channel: throttledChannel, [.throttled, .unavailable])
        push.apns.script(token: Self.apnsHandle(2), [.unregistered(at: Date().addingTimeInterval(1))])
        push.apns.script(token: Self.apnsHandle(3), [.tooManyRequests(retryAfter: 1), .serviceUnavailable])
        push.apns.script(token: Self.apnsHandle(4), [.status(400, reason: "DeviceTokenNotForTopic")])
        // The token died an hour ago, but the device registered (again) since: it is kept.
        push.apns.script(token: Self.apnsHandle(5), [.unregistered(at: Date().addingTimeInterval(-3_600))])
        push.apns.script(token: Self.apnsHandle(6), [.expiredProviderToken])
        push.fcm.script(token: Self.fcmHandle("gone"), [.unregistered])
        push.fcm.script(token: Self.fcmHandle("bad"), [.invalidArgument])
        push.fcm.script(token: Self.fcmHandle("quota"), [.quotaExceeded(retryAfter: 1)])

        try await publish(#"{"id":"push-all","properties":{"News_English":"Summit ends"}}"#)
        let all = try await receipts(of: "push-all", count: 13, log: stderr)
        func receipt(_ registration: String) throws -> PushReceipt {
            let copies = try #require(all["push-all/\(registration)/news"], "no receipt for \(registration)")
            #expect(Set(copies.map(\.outcome)).count == 1, "receipts disagree: \(copies)")
            return copies[0]
        }
        let sent = try receipt(ok)
        #expect(sent.outcome == .sent && sent.attempts == 1 && sent.statusCode == 200)
        #expect(sent.serviceId == APNsRequestID.forDelivery("push-all/\(ok)/news").uuidString)
        #expect(try receipt(gone).outcome == .unregistered)
        let retried = try receipt(busy)
        #expect(retried.outcome == .sent && retried.attempts == 3, "\(retried)")
        let rejected = try receipt(wrongTopic)
        #expect(rejected.outcome == .rejected && rejected.reason == "DeviceTokenNotForTopic" && rejected.statusCode == 400)
        #expect(try receipt(reRegistered).outcome == .unregistered)
        let renewed = try receipt(staleToken)
        #expect(renewed.outcome == .sent && renewed.attempts == 2, "\(renewed)")
        let fcmSent = try receipt(fcmOK)
        #expect(fcmSent.outcome == .sent && fcmSent.serviceId?.hasPrefix("projects/herald-test/messages/") == true)
        #expect(try receipt(fcmGone).outcome == .unregistered)
        #expect(try receipt(fcmBad).outcome == .rejected)
        let quota = try receipt(fcmQuota)
        #expect(quota.outcome == .sent && quota.attempts == 2, "\(quota)")
        let toastSent = try receipt(windows)
        #expect(toastSent.outcome == .sent && toastSent.statusCode == 200 && toastSent.serviceId != nil, "\(toastSent)")
        #expect(try receipt(windowsGone).outcome == .unregistered)
        // WNS's 406 (the channel is throttled) and 503 are retried with backoff.
        let throttled = try receipt(windowsThrottled)
        #expect(throttled.outcome == .sent && throttled.attempts == 3, "\(throttled)")
        let shown = try #require(push.wns.requests().first { $0.status == 200 })
        #expect(String(decoding: shown.body, as: UTF8.self).contains(">Summit ends</text>"))
        #expect(shown.header("x-wns-type") == "wns/toast")

        // Removed through herald.registrations: gone from the API and from the index; the
        // others stay.
        for id in [gone, fcmGone, windowsGone] {
            var status = 200
            for _ in 0..<100 where status == 200 {
                status = try await api.send("GET", "/v1/registrations/\(id)").status
                if status == 200 { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(status == 410 || status == 404, "registration \(id) still there")
        }
        let byHandle = try await api.send("GET", "/v1/registrations?handle=\(Self.apnsHandle(2))")
        #expect(byHandle.status == 200 && byHandle.text.contains(#""items":[]"#), "\(byHandle.text)")
        for id in [ok, wrongTopic, reRegistered, fcmBad] {
            #expect(try await api.send("GET", "/v1/registrations/\(id)").status == 200, "registration \(id) was removed")
        }

        // The status counts the receipts per platform and outcome.
        let status = try await api.send("GET", "/v1/notifications/push-all")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(status.text.utf8)) as? [String: Any])
        let counts = try #require(document["push"] as? [String: [String: Int]], "\(status.text)")
        #expect(counts["apns"] == ["sent": 3, "unregistered": 2, "rejected": 1], "\(counts)")
        #expect(counts["fcm"] == ["sent": 2, "unregistered": 1, "rejected": 1], "\(counts)")
        #expect(counts["wns"] == ["sent": 2, "unregistered": 1], "\(counts)")
        // Its reach: all 13 deliveries committed; 7 sent, over half of them.
        let reach = try #require(document["reach"] as? [String: [String: Int]], "\(status.text)")
        #expect(reach["committed"]?["count"] == 13 && reach["committed"]?["allMs"] != nil, "\(reach)")
        #expect(reach["sent"]?["count"] == 7 && reach["sent"]?["p50Ms"] != nil && reach["sent"]?["p90Ms"] == nil, "\(reach)")
        // The deliveries not sent are kept for a correction of the event to leave out: 6 of 13.
        let pool = RedisConnectionPool(configuration: try RedisConfiguration(url: redis.url), size: 1)
        let unsent = try await pool.withConnection { try await $0.send(.smembers(layout.unsentKey(eventId: "push-all"))) }
        pool.shutdown()
        let unsentIds: [RedisValue]
        if case .array(let values) = unsent { unsentIds = values } else { unsentIds = [] }
        #expect(unsentIds.count == 6, "\(unsent)")

        // The app reports what readers did; each device counts once; the status and herald stats
        // (from herald.engagements) show the funnel.
        let device = HeraldHTTPClient.signed(base, (name: "Full", key: full.key))
        for (id, action) in [(ok, "opened"), (ok, "opened"), (fcmOK, "opened"), (fcmQuota, "dismissed")] {
            let reply = try await device.send(
                "POST", "/v1/notifications/push-all/engagements", body: Data(#"{"action":"\#(action)","registrationId":"\#(id)"}"#.utf8))
            #expect(reply.status == 202, "\(reply.text)")
        }
        let funnel =
            try #require(
                try JSONSerialization.jsonObject(with: Data(try await api.send("GET", "/v1/notifications/push-all").text.utf8))
                    as? [String: Any])[
                "engagement"] as? [String: Any]
        #expect(funnel?["opened"] as? Int == 2 && funnel?["dismissed"] as? Int == 1, "\(String(describing: funnel))")
        #expect((funnel?["openedByPlatform"] as? [String: Int]) == ["apns": 1, "fcm": 1], "\(String(describing: funnel))")
        let stats = try HeraldBinary.run(
            ["stats", "--event", "push-all", "--json"],
            environment: ["HERALD_KAFKA_BROKERS": broker.bootstrapServers, "HERALD_TOPIC_PREFIX": prefix + ".herald."])
        #expect(stats.status == 0, "\(stats.stderr)")
        #expect(stats.stdout.contains(#""opened":2"#) && stats.stdout.contains(#""dismissed":1"#), "\(stats.stdout)")
        try funnelQueryAgrees(environment: ["HERALD_KAFKA_BROKERS": broker.bootstrapServers, "HERALD_TOPIC_PREFIX": prefix + ".herald."])

        // One provider token for every APNs request, one access token for every FCM request;
        // every APNs request carried the topic and an apns-id derived from its delivery id.
        let requests = push.apns.requests()
        #expect(Set(requests.compactMap { $0.header("authorization") }).count == 1)
        #expect(push.fcm.tokensIssued == 1)
        for request in requests {
            #expect(request.header("apns-topic") == push.topic)
            #expect(request.header("apns-push-type") == "alert")
        }
    }

    @Test(
        "a hub's own credentials: its deliveries go with its own APNs team and FCM project, a hub without them and the default hub with the deployment's; a key that does not parse is refused at the door; no read answers a key"
    )
    func hubCredentials() async throws {
        // The sports app: its own Apple team (another APNs server, so nothing else can accept
        // its requests) and its own Firebase project on the deployment's FCM endpoint.
        let sportsKey = LocalAPNsKey()
        let sportsTopic = "com.example.sports"
        let sportsAPNs = try await LocalAPNsServer.start(authority: push.authority, key: sportsKey, topics: [sportsTopic])
        defer { Task { await sportsAPNs.shutdown() } }
        sportsAPNs.recordRequests = true
        push.apns.recordRequests = true
        let sportsAccount = try LocalServiceAccount(projectId: "sports-project", accountName: "sports-sender")
        await push.fcm.addAccount(sportsAccount)
        try await startStack(roles: "planner,fanout,indexer,sender")

        let serviceAccount = String(decoding: sportsAccount.json(tokenURI: push.fcm.tokenURI), as: UTF8.self)
        func hub(apnsKey: String) -> String {
            let pem = apnsKey.replacingOccurrences(of: "\n", with: "\\n")
            return #"""
                {"credentials":{"apns":{"keyId":"\#(sportsKey.keyId)","teamId":"\#(sportsKey.teamId)","topics":["\#(sportsTopic)"],"key":"\#(pem)","endpoint":"\#(sportsAPNs.baseURL)"},"fcm":{"serviceAccount":\#(serviceAccount)}}}
                """#
        }
        // A key with the PEM markers but no P-256 key inside: refused, naming the member.
        let garbage = "-----BEGIN PRIVATE KEY-----\nTm90IGEga2V5\n-----END PRIVATE KEY-----"
        let refused = try await api.send("PUT", "/v1/hubs/sports", body: Data(hub(apnsKey: garbage).utf8))
        #expect(refused.status == 400 && refused.text.contains("credentials.apns.key"), "\(refused.text)")
        #expect(try await api.send("GET", "/v1/hubs/sports").status == 404, "nothing was stored")
        let created = try await api.send("PUT", "/v1/hubs/sports", body: Data(hub(apnsKey: sportsKey.pem).utf8))
        #expect(created.status == 201, "\(created.text)")
        #expect(try await api.send("PUT", "/v1/hubs/weather").status == 201)
        let read = try await api.send("GET", "/v1/hubs/sports")
        #expect(read.text.contains(sportsKey.teamId) && read.text.contains("sports-project"), "\(read.text)")
        for secret in ["PRIVATE KEY", "private_key\"", "\"key\""] {
            #expect(!read.text.contains(secret) && !created.text.contains(secret), "a read answered \(secret): \(read.text)")
        }

        let sportsPhone = try await registerAPNs(0x21, hub: "sports")
        let sportsPixel = try await registerFCM("sports", hub: "sports")
        let weatherPhone = try await registerAPNs(0x22, hub: "weather")
        let newsPhone = try await registerAPNs(0x23)
        let newsPixel = try await registerFCM("news")
        for (routes, id) in [("/v1/hubs/sports", "hub-sports"), ("/v1/hubs/weather", "hub-weather"), ("/v1", "hub-news")] {
            let reply = try await api.send(
                "POST", "\(routes)/notifications", body: Data(#"{"id":"\#(id)","properties":{"News_English":"\#(id)"}}"#.utf8))
            #expect(reply.status == 202, "\(reply.text)")
        }
        let sports = try await receipts(of: "hub-sports", count: 2, log: stderr).values.map { $0[0] }
        let weather = try await receipts(of: "hub-weather", count: 1, log: stderr).values.map { $0[0] }
        let news = try await receipts(of: "hub-news", count: 2, log: stderr).values.map { $0[0] }
        for receipt in sports + weather + news { #expect(receipt.outcome == .sent, "\(receipt)") }
        #expect(Set(sports.map(\.registrationId)) == [sportsPhone, sportsPixel])
        #expect(weather.map(\.registrationId) == [weatherPhone] && Set(news.map(\.registrationId)) == [newsPhone, newsPixel])

        // APNs: the sports phone's push went to the sports team's server with its token and
        // topic; the other hubs' to the deployment's.
        let sportsRequests = sportsAPNs.requests()
        #expect(sportsRequests.map(\.token) == [Self.apnsHandle(0x21)])
        #expect(sportsRequests.first?.issuer == sportsKey.teamId && sportsRequests.first?.header("apns-topic") == sportsTopic)
        let deploymentRequests = push.apns.requests()
        #expect(Set(deploymentRequests.map(\.token)) == [Self.apnsHandle(0x22), Self.apnsHandle(0x23)])
        #expect(deploymentRequests.allSatisfy { $0.issuer == push.apnsKey.teamId && $0.header("apns-topic") == push.topic })
        // FCM: each project's message under its own project, with its own account's token.
        let fcmSent = Dictionary(uniqueKeysWithValues: sports.filter { $0.platform == .fcm }.map { ($0.registrationId, $0) })
        #expect(fcmSent[sportsPixel]?.serviceId?.hasPrefix("projects/sports-project/messages/") == true, "\(fcmSent)")
        let newsPixelReceipt = news.first { $0.registrationId == newsPixel }
        #expect(newsPixelReceipt?.serviceId?.hasPrefix("projects/herald-test/messages/") == true, "\(String(describing: newsPixelReceipt))")
    }

    /// The analysts' funnel query of docs/topics.md, as written there, run by DuckDB over `herald
    /// tail --json` of the three topics: per platform, the deliveries, `sent` receipts and opens
    /// `outcomes` made (6, 4 and 2 deliveries; 3, 2 and 1 sent; 1, 1 and 0 opened).
    func funnelQueryAgrees(environment: [String: String]) throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("funnel-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let docs = try String(contentsOf: ToolPaths.repositoryRoot.appendingPathComponent("docs/topics.md"), encoding: .utf8)
        let marked = docs.components(separatedBy: "<!-- funnel query: SenderStackTests runs the block below -->\n```sql\n")
        var query = try #require(
            marked.count == 2 ? marked[1].components(separatedBy: "```").first : nil, "no funnel query in docs/topics.md")
        for stream in ["deliveries", "receipts", "engagements"] {
            let tail = try HeraldBinary.run(["tail", stream, "--event", "push-all", "--json"], environment: environment)
            #expect(tail.status == 0, "\(tail.stderr)")
            let file = scratch.appendingPathComponent("\(stream).jsonl")
            try tail.stdout.write(to: file, atomically: true, encoding: .utf8)
            query = query.replacingOccurrences(of: "'\(stream).jsonl'", with: "'\(file.path)'")
        }
        let sql = scratch.appendingPathComponent("funnel.sql")
        try query.write(to: sql, atomically: true, encoding: .utf8)
        let python = ToolPaths.repositoryRoot.appendingPathComponent(".herald/duckdb/bin/python").path
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw TestServerError(message: "no DuckDB at \(python): run scripts/bootstrap (make test does)")
        }
        let run = try HeraldBinary.run(
            ["-c", "import duckdb, json, sys; print(json.dumps(duckdb.sql(open(sys.argv[1]).read()).fetchall()))", sql.path],
            executable: python)
        #expect(run.status == 0, "\(run.stderr)")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [[Any]], "\(run.stdout)")
        let summary = rows.map { row in row.prefix(5).map { "\($0)" }.joined(separator: " ") }
        #expect(summary == ["push-all apns 6 3 1", "push-all fcm 4 2 1", "push-all wns 3 2 0"], "\(run.stdout)")
    }

    /// Registers a browser through the API with its subscription as the browser gives it.
    func registerBrowser(_ browser: LocalWebPushServer.Subscription) async throws -> String {
        let id = String(try #require(try await api.send("POST", "/v1/registrationIDs").header("Location")?.split(separator: "/").last))
        let document: [String: Any] = [
            "platform": "webpush", "subscription": browser.json, "tags": ["World"],
            "template": ["name": "news", "body": #"{"title":"Breaking","body":"$(News_English)"}"#],
        ]
        let reply = try await api.send("PUT", "/v1/registrations/\(id)", body: try JSONSerialization.data(withJSONObject: document))
        #expect(reply.status == 200, "\(reply.text)")
        return id
    }

    @Test(
        "web push through the running role: encrypted for each browser and decrypted by it, a throttled push retried, an unsubscribed browser's registration removed"
    )
    func webPush() async throws {
        try await startStack(roles: "planner,fanout,indexer,sender")
        let browsers = (0..<3).map { _ in push.webPush.subscribe() }
        var ids: [String] = []
        for browser in browsers { ids.append(try await registerBrowser(browser)) }
        push.webPush.script(subscription: browsers[1].id, [.tooManyRequests(retryAfter: 1)])
        push.webPush.unsubscribe(browsers[2].id)

        try await publish(#"{"id":"push-web","priority":"high","collapseId":"summit","properties":{"News_English":"Summit ends"}}"#)
        let all = try await receipts(of: "push-web", count: 3, log: stderr)
        func receipt(_ n: Int) throws -> PushReceipt { try #require(all["push-web/\(ids[n])/news"]?.first, "no receipt for \(n)") }
        let sent = try receipt(0)
        #expect(sent.outcome == .sent && sent.attempts == 1 && sent.statusCode == 201, "\(sent)")
        #expect(sent.serviceId?.hasPrefix(push.webPush.origin + "/message/") == true)
        let retried = try receipt(1)
        #expect(retried.outcome == .sent && retried.attempts == 2, "\(retried)")
        #expect(try receipt(2).outcome == .unregistered)

        // What each browser decrypted is the rendered template; the headers came from the event.
        let delivered = push.webPush.requests().filter { $0.status == 201 }
        #expect(Set(delivered.map(\.subscriptionId)) == [browsers[0].id, browsers[1].id])
        for request in delivered {
            let text = String(decoding: request.plaintext ?? [], as: UTF8.self)
            #expect(text == #"{"title":"Breaking","body":"Summit ends"}"#)
            #expect(request.header("urgency") == "high" && request.header("topic") == "summit" && request.header("ttl") != nil)
        }
        #expect(push.webPush.distinctTokens == 1)

        var status = 200
        for _ in 0..<100 where status == 200 {
            status = try await api.send("GET", "/v1/registrations/\(ids[2])").status
            if status == 200 { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(status == 410 || status == 404, "the unsubscribed browser's registration is still there")
        #expect(try await api.send("GET", "/v1/registrations/\(ids[0])").status == 200)
    }

    @Test(
        "a direct send through the running role: its handles get the native payloads, and an unregistered answer removes no registration, not even one with the same token"
    )
    func directSend() async throws {
        try await startStack(roles: "planner,fanout,indexer,sender")
        let registered = try await registerAPNs(9)
        push.apns.script(token: Self.apnsHandle(9), [.unregistered(at: Date().addingTimeInterval(-3_600))])
        let direct = #"[{"platform":"apns","handle":"\#(Self.apnsHandle(9))"},{"platform":"fcm","handle":"\#(Self.fcmHandle("d1"))"}]"#
        let native = #"{"apns":{"aps":{"alert":"Direct"}},"fcm":{"message":{"data":{"story":"42"}}}}"#
        try await publish(#"{"id":"push-direct","direct":\#(direct),"native":\#(native)}"#)
        let all = try await receipts(of: "push-direct", count: 2, log: stderr)
        let byId = Dictionary(uniqueKeysWithValues: all.values.compactMap(\.first).map { ($0.registrationId, $0) })
        #expect(byId["$direct:0"]?.outcome == .unregistered && byId["$direct:0"]?.platform == .apns, "\(byId)")
        #expect(byId["$direct:1"]?.outcome == .sent && byId["$direct:1"]?.platform == .fcm, "\(byId)")
        let fcm = push.fcm.requests().filter { $0.token == Self.fcmHandle("d1") }
        #expect(fcm.count == 1, "\(fcm.count) FCM requests to the direct handle")
        #expect(fcm.first.map { String(decoding: $0.body, as: UTF8.self) }?.contains(#""story":"42""#) == true)
        // The removal step runs before the receipts are committed: the registration is kept.
        #expect(try await api.send("GET", "/v1/registrations/\(registered)").status == 200)
        let status = try await api.send("GET", "/v1/notifications/push-direct")
        #expect(status.status == 200 && status.text.contains(#""direct":1"#), "\(status.text)")
    }

    @Test("a delivery past its expiresAt is never sent: its receipt says expired")
    func expired() async throws {
        try await startStack(roles: "planner,fanout,indexer")
        _ = try await registerAPNs(7)
        let expiry = Date().addingTimeInterval(10)
        let expiresAt = ISO8601Timestamp.format(expiry)
        try await publish(#"{"id":"push-late","expiresAt":"\#(expiresAt)","properties":{"News_English":"Too late"}}"#)
        var state = ""
        for _ in 0..<200 where !state.contains(#""state":"completed""#) {
            state = try await api.send("GET", "/v1/notifications/push-late").text
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(state.contains(#""state":"completed""#), "\(state)")
        try await Task.sleep(for: .seconds(max(0, expiry.timeIntervalSinceNow) + 0.5))
        let sender = try startSender()
        defer { sender.signal(SIGTERM) }
        let found = try await receipts(of: "push-late", count: 1) { sender.stderr() }
        let receipt = try #require(found.values.first?.first)
        #expect(receipt.outcome == .expired && receipt.attempts == 0)
        #expect(push.apns.requestCount == 0)
    }

    /// The status JSON of `eventId` once `done` holds; fails only when it stops changing for 120 s.
    func status(of eventId: String, until done: @escaping @Sendable (String) -> Bool) async throws -> String {
        try await waitWhileProgressing("status of \(eventId)", stallLimit: .seconds(120), interval: .milliseconds(100)) {
            () async throws -> ProgressCheck<String, String> in
            let text = try await api.send("GET", "/v1/notifications/\(eventId)").text
            return done(text) ? .done(text) : .waiting(text)
        }
    }

    @Test(
        "herald publish: --dry-run prints the rehearsal's counts and previews and delivers nothing; --test-recipient reaches that device alone under a test id; --urgency breaking takes the express lane; a bad urgency is refused"
    )
    func publishFromTheCommandLine() async throws {
        try await startStack(roles: "planner,fanout,indexer")
        var ids: [String] = []
        for n in 0..<3 { ids.append(try await registerAPNs(40 + n)) }
        let cli = environment(roles: "planner", instance: prefix + "-publish")
        let rehearsal = try HeraldBinary.run(
            ["publish", "--id", "cli-1", "--property", "News_English=Rehearsed", "--dry-run"], environment: cli, timeout: 300)
        #expect(rehearsal.status == 0, "\(rehearsal.stderr)")
        #expect(
            rehearsal.stdout.contains("rehearsal cli-1~rehearsal-") && rehearsal.stdout.contains("nothing is delivered"),
            "\(rehearsal.stdout)")
        #expect(rehearsal.stdout.contains(#""total":3"#), "the rehearsal's status: \(rehearsal.stdout)")
        #expect(rehearsal.stdout.contains("preview apns news:") && rehearsal.stdout.contains("Rehearsed"), "\(rehearsal.stdout)")

        let tested = try HeraldBinary.run(
            ["publish", "--id", "cli-1", "--property", "News_English=Test", "--test-recipient", ids[0], "--wait"], environment: cli,
            timeout: 300)
        #expect(tested.status == 0, "\(tested.stderr)")
        let testLine = try #require(tested.stdout.split(separator: "\n").first { $0.hasPrefix("test send ") }, "\(tested.stdout)")
        let testId = String(testLine.dropFirst("test send ".count).prefix { $0 != ":" })
        #expect(testId.hasPrefix("cli-1~test-"), "\(testLine)")
        #expect(tested.stdout.contains(#""total":1"#), "the test send reached one device: \(tested.stdout)")
        let testDeliveries = try await deliveries(of: testId)
        #expect(testDeliveries.map(\.registrationId) == [ids[0]], "\(testDeliveries)")

        let urgent = try HeraldBinary.run(
            ["publish", "--id", "cli-2", "--property", "News_English=Now", "--urgency", "breaking", "--wait"], environment: cli,
            timeout: 300)
        #expect(urgent.status == 0 && urgent.stdout.contains(#""state":"completed""#), "\(urgent.stdout)\(urgent.stderr)")
        var express: [String] = []
        for try await message in RecordTail(topic: topics.expressTasks, bootstrapServers: broker.bootstrapServers).records() {
            if let value = message.value { express.append(try JSONDecoder().decode(FanoutTask.self, from: Data(value)).eventId) }
        }
        #expect(express.contains("cli-2"), "the breaking alert's tasks went to the express lane: \(express)")
        let refused = try HeraldBinary.run(["publish", "--property", "News_English=x", "--urgency", "soon"], environment: cli)
        #expect(refused.status != 0 && refused.stderr.contains("urgency"), "\(refused.stderr)")
    }

    @Test(
        "Live Activity tokens through the running role: an update reaches the activity's topic, a busy token is retried to sent, an ended activity's token is removed"
    )
    func liveActivities() async throws {
        try await startStack(roles: "planner,fanout,indexer,sender")
        var tokens: [String] = []
        for n in 50..<53 {
            let id = String(
                try #require(try await api.send("POST", "/v1/registrationIDs").header("Location")?.split(separator: "/").last))
            let json = #"{"platform":"apns","handle":"\#(Self.apnsHandle(n))","tokenKind":"liveActivity","tags":["Match_ARS_CHE"]}"#
            let reply = try await api.send("PUT", "/v1/registrations/\(id)", body: Data(json.utf8))
            #expect(reply.status == 200, "\(reply.text)")
            tokens.append(id)
        }
        push.apns.script(token: Self.apnsHandle(51), [.tooManyRequests(retryAfter: 1)])
        push.apns.script(token: Self.apnsHandle(52), [.unregistered(at: Date().addingTimeInterval(1))])
        try await publish(
            #"{"id":"match-1","tags":"Match_ARS_CHE","liveActivity":{"event":"update","contentState":{"home":1,"away":0}}}"#)
        let all = try await receipts(of: "match-1", count: 3, log: stderr)
        let outcomes = Dictionary(all.values.compactMap(\.first).map { ($0.registrationId, $0) }, uniquingKeysWith: { first, _ in first })
        #expect(outcomes[tokens[0]]?.outcome == .sent, "\(outcomes)")
        let retried = try #require(outcomes[tokens[1]], "\(outcomes)")
        #expect(retried.outcome == .sent && retried.attempts == 2, "\(retried)")
        #expect(outcomes[tokens[2]]?.outcome == .unregistered, "\(outcomes)")
        let update = try #require(push.apns.requests().first { $0.status == 200 }, "no Live Activity push accepted")
        #expect(
            update.header("apns-push-type") == "liveactivity" && update.header("apns-topic")?.hasSuffix(".push-type.liveactivity") == true)
        try await waitUntilTrue("the ended activity's token to be removed") {
            let status = try await api.send("GET", "/v1/registrations/\(tokens[2])").status
            return status == 410 || status == 404
        }
        #expect(try await api.send("GET", "/v1/registrations/\(tokens[0])").status == 200)
    }

    @Test(
        "deliveries of events stopped after their fan-out are never sent: their receipts say cancelled; another event's are sent; DELETE then is a 409"
    )
    func stoppedBeforeSending() async throws {
        try await startStack(roles: "planner,fanout,indexer")
        for n in 0..<3 { _ = try await registerAPNs(20 + n) }
        for id in ["push-stop", "push-cli", "push-go"] { try await publish(#"{"id":"\#(id)","properties":{"News_English":"\#(id)"}}"#) }
        for id in ["push-stop", "push-cli", "push-go"] { _ = try await status(of: id) { $0.contains(#""state":"completed""#) } }
        // Stopped as DELETE stops an event (its stop key), before any sender has read them.
        let connection = try await RedisConnection.connect(configuration: RedisConfiguration(url: redis.url))
        for id in ["push-stop", "push-cli"] {
            _ = try await connection.send(RedisCommand("SET", layout.stopKey(eventId: id), "1", "EX", "600"))
        }
        connection.close()
        let cli = environment(roles: "planner", instance: prefix + "-cli")
        let unknown = try HeraldBinary.run(["cancel", "push-none"], environment: cli)
        #expect(unknown.status != 0 && unknown.stderr.contains("does not exist"), "\(unknown.stderr)")

        let sender = try startSender()
        defer { sender.signal(SIGTERM) }
        for id in ["push-stop", "push-cli"] {
            let stopped = try await receipts(of: id, count: 3) { sender.stderr() }
            #expect(stopped.count == 3)
            for receipt in stopped.values.flatMap({ $0 }) {
                #expect(receipt.outcome == .cancelled && receipt.attempts == 0 && receipt.reason?.hasPrefix("cancelled") == true)
            }
        }
        let sent = try await receipts(of: "push-go", count: 3) { sender.stderr() }
        #expect(sent.values.flatMap { $0 }.allSatisfy { $0.outcome == .sent })
        #expect(push.apns.requestCount == 3)
        let counted = try await status(of: "push-stop") { $0.contains(#""cancelled":3"#) }
        #expect(counted.contains(#""state":"completed""#), "\(counted)")
        let again = try await api.send("DELETE", "/v1/notifications/push-stop")
        #expect(again.status == 409, "every delivery has its receipt: \(again.text)")
    }

    @Test("a sender SIGKILLed mid-run and restarted sends nothing twice that it had recorded; every delivery ends with one receipt")
    func killedMidRun() async throws {
        let count = 2_000
        let pool = RedisConnectionPool(configuration: try RedisConfiguration(url: redis.url), size: 1)
        defer { pool.shutdown() }
        try await seedBroadcastAudience(RegistrationIndex(pool: pool, layout: layout), count: count, idPrefix: "s")
        try await startStack(roles: "planner,fanout")
        push.apns.setDelay(.milliseconds(20))
        let slow = ["HERALD_SENDER_BATCH": "250", "HERALD_PUSH_CONNECTIONS": "1", "HERALD_PUSH_STREAMS": "20"]
        var sender = try startSender(extra: slow)
        try await publish(#"{"id":"push-kill","properties":{"News_English":"Breaking"}}"#)
        let deadline = Date().addingTimeInterval(120)
        while push.apns.requestCount < count / 3 && Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        sender.signal(SIGKILL)
        #expect(sender.waitForExit(timeout: 10))
        // What the dead sender had recorded: its sent-markers and the receipts it wrote.
        let markers = try await pool.withConnection { try await $0.send(.hgetall(layout.sentMarkersKey(eventId: "push-kill"))) }
        var recorded = Set<String>()
        if case .array(let values) = markers {
            for index in stride(from: 0, to: values.count, by: 2) { if let id = values[index].string { recorded.insert(id) } }
        }
        let markerCount = recorded.count
        var tail = RecordTail(topic: topics.receipts, bootstrapServers: broker.bootstrapServers)
        tail.eventId = "push-kill"
        for try await message in tail.records() {
            if let key = message.key { recorded.insert(String(decoding: key, as: UTF8.self)) }
        }
        let sentBeforeKill = push.apns.requestCount
        #expect(!recorded.isEmpty && sentBeforeKill < count, "the sender finished before the kill; make it slower")

        sender = try startSender(extra: slow)
        defer { sender.signal(SIGTERM) }
        let all = try await receipts(of: "push-kill", count: count) { sender.stderr() }
        #expect(all.count == count)
        for (id, copies) in all { #expect(copies.allSatisfy { $0.outcome == .sent }, "\(id): \(copies)") }
        var requestsPerId: [String: Int] = [:]
        for request in push.apns.requests() { requestsPerId[request.header("apns-id") ?? "", default: 0] += 1 }
        let twiceRecorded = recorded.filter { requestsPerId[APNsRequestID.forDelivery($0).uuidString, default: 0] != 1 }
        #expect(twiceRecorded.isEmpty, "\(twiceRecorded.count) recorded deliveries were sent again, e.g. \(twiceRecorded.prefix(3))")
        let resent = requestsPerId.values.filter { $0 > 1 }.count
        print(
            "sender kill: \(sentBeforeKill) requests before SIGKILL, \(recorded.count) recorded (\(markerCount) by markers); \(resent) deliveries sent twice (answered but not yet marked when killed); \(count) receipts"
        )
    }
}
