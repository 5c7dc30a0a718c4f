import Foundation
import HeraldAPI
import HeraldDomain
import HeraldApp
import HeraldPipeline
import HeraldRedis
import HeraldRegistry
import HeraldTestSupport
import Testing
import HeraldStreams

/// The real `herald api` process on a private Redis and broker: access rules, validation and
/// versioning with the real registry behind them, and what reached Kafka and Redis.
@Suite(
    "herald api on a real broker and Redis", .heavy, .serialized, .enabled(if: HeraldBinary.isBuilt, "build the herald executable first"))
final class APIStackTests {
    let redis: TestRedis
    let broker: TestBroker
    let api: HeraldBinary.Running
    let base: URL
    // Production-grade lengths (32 bytes or more): the API refuses shorter keys at start-up.
    let full = (name: "Full", key: "full-key-for-the-api-stack-tests-0001")
    let listen = (name: "Listen", key: "listen-key-for-the-api-stack-tests-01")
    let send = (name: "Send", key: "send-key-for-the-api-stack-tests-0001")
    let userKey = "user-token-key-for-the-api-stack-tests"

    init() async throws {
        redis = try TestRedis()
        broker = try TestBroker()
        let port = freeLocalPort()
        base = URL(string: "http://127.0.0.1:\(port)/")!
        // No worker runs here to build the index (its indexer role would); declare the empty
        // index whole so the API is ready.
        let pool = RedisConnectionPool(configuration: try RedisConfiguration(url: redis.url), size: 1)
        try await RegistrationIndex(pool: pool, layout: RegistryConfiguration().layout).markBuilt()
        pool.shutdown()
        api = try HeraldBinary.start(
            ["api"],
            environment: [
                "HERALD_KAFKA_BROKERS": broker.bootstrapServers, "HERALD_REDIS_URL": redis.url,
                "HERALD_API_HOST": "127.0.0.1", "HERALD_API_PORT": String(port), "HERALD_HUB_URI": base.absoluteString,
                "HERALD_POLICIES":
                    "\(full.name):listen+send+manage:\(full.key);\(listen.name):listen:\(listen.key);\(send.name):send:\(send.key)",
                "HERALD_USER_TOKEN_KEY": userKey, "HERALD_ID_SECRET": "id-secret-for-the-api-stack-tests-000001",
                "HERALD_LOG_LEVEL": "warning",
            ])
        let api = api
        try await HeraldHTTPClient(baseURL: base).waitUntilReady { api.stderr() }
    }

    deinit {
        api.signal(SIGTERM)
        _ = api.waitForExit(timeout: 20)
        broker.stop()
        redis.stop()
    }

    func client(_ policy: (name: String, key: String)) -> HeraldHTTPClient { .signed(base, policy) }

    func newId(_ client: HeraldHTTPClient) async throws -> String {
        let reply = try await client.send("POST", "/v1/registrationIDs")
        #expect(reply.status == 201)
        return String(try #require(reply.header("Location")?.split(separator: "/").last))
    }

    static let device =
        #"{"platform":"apns","handle":"\#(String(repeating: "ab", count: 32))","tags":["World"],"template":{"name":"newsTemplate","body":"{\"aps\":{\"alert\":\"$(News_English)\"}}"}}"#

    func registrationRecords() async throws -> Int {
        var count = 0
        for try await _ in RecordTail(topic: "herald.registrations", bootstrapServers: broker.bootstrapServers).records() { count += 1 }
        return count
    }

    func storedDocuments() async throws -> Int {
        let connection = try await RedisConnection.connect(configuration: RedisConfiguration(url: redis.url))
        defer { connection.close() }
        let keys = try await connection.send(RedisCommand("KEYS", "herald:{*}:doc:*"))
        return keys.array?.count ?? 0
    }

    @Test("missing, forged and expired tokens get 401; a right the policy lacks gets 403")
    func access() async throws {
        let anonymous = HeraldHTTPClient(baseURL: base)
        let missing = try await anonymous.send("POST", "/v1/registrationIDs")
        #expect(missing.status == 401)
        #expect(missing.text.contains(#""error""#))
        let forged = HeraldHTTPClient(
            baseURL: base,
            authorization: SharedAccessSignature.token(
                resource: base.absoluteString, policy: full.name, key: "not-the-key", expiry: Date().addingTimeInterval(600)))
        #expect(try await forged.send("POST", "/v1/registrationIDs").status == 401)
        let expired = HeraldHTTPClient(
            baseURL: base,
            authorization: SharedAccessSignature.token(
                resource: base.absoluteString, policy: full.name, key: full.key, expiry: Date().addingTimeInterval(-60)))
        #expect(try await expired.send("POST", "/v1/registrationIDs").status == 401)
        let event = Data(#"{"tags":"World","properties":{"News_English":"x"}}"#.utf8)
        #expect(try await client(listen).send("POST", "/v1/notifications", body: event).status == 403)
        #expect(try await client(send).send("POST", "/v1/notifications", body: event).status == 202)
        #expect(try await client(listen).send("GET", "/v1/registrations?tag=World").status == 403)
    }

    @Test("bad bodies get 400 naming the field, and nothing reaches Kafka or Redis")
    func badBodies() async throws {
        let api = client(listen)
        let id = try await newId(api)
        let template70KB = String(repeating: "x", count: 70_000)
        let bodies: [(String, String)] = [
            (#"{"platform":"apns","handle":"#, "malformed"),
            (#"{"platform":"blackberry","handle":"abc","tags":[]}"#, "platform"),
            (#"{"platform":"apns","handle":42,"tags":[]}"#, "handle"),
            (#"{"platform":"apns","handle":"\#(String(repeating: "ab", count: 32))","tags":["bad tag!"]}"#, "tags"),
            (
                #"{"platform":"apns","handle":"\#(String(repeating: "ab", count: 32))","tags":[],"template":{"name":"t","body":"{\"a\":\"\#(template70KB)\"}"}}"#,
                "template"
            ),
        ]
        for (body, field) in bodies {
            let reply = try await api.send("PUT", "/v1/registrations/\(id)", body: Data(body.utf8))
            #expect(reply.status == 400, "\(field): \(reply.status) \(reply.text.prefix(200))")
            if field != "malformed" { #expect(reply.text.contains(field), "\(reply.text.prefix(300))") }
        }
        #expect(try await registrationRecords() == 0)
        #expect(try await storedDocuments() == 0)
    }

    @Test("read your writes, 412 on a stale If-Match, 410 after delete, the write is on Kafka")
    func versions() async throws {
        let api = client(listen)
        let id = try await newId(api)
        let put = try await api.send("PUT", "/v1/registrations/\(id)", body: Data(Self.device.utf8))
        #expect(put.status == 200)
        let etag = try #require(put.header("ETag"))
        let get = try await api.send("GET", "/v1/registrations/\(id)")
        #expect(get.status == 200)
        #expect(get.header("ETag") == etag)
        #expect(
            try await api.send("PUT", "/v1/registrations/\(id)", body: Data(Self.device.utf8), headers: ["If-Match": "\"1\""]).status == 412
        )
        #expect(try await api.send("DELETE", "/v1/registrations/\(id)", headers: ["If-Match": etag]).status == 204)
        #expect(try await api.send("PUT", "/v1/registrations/\(id)", body: Data(Self.device.utf8)).status == 410)
        #expect(try await api.send("PUT", "/v1/registrations/never-issued-id", body: Data(Self.device.utf8)).status == 410)
        #expect(try await registrationRecords() == 2)  // the upsert and its tombstone
    }

    @Test("a user token gets $UserId added, may not claim another user, and cannot read another user's device")
    func notifyUsers() async throws {
        let alice = HeraldHTTPClient(
            baseURL: base,
            authorization: "Bearer " + (try await UserToken.make(user: "alice", key: userKey, expiry: Date().addingTimeInterval(600))))
        let bob = HeraldHTTPClient(
            baseURL: base,
            authorization: "Bearer " + (try await UserToken.make(user: "bob", key: userKey, expiry: Date().addingTimeInterval(600))))
        let id = try await newId(alice)
        let put = try await alice.send("PUT", "/v1/registrations/\(id)", body: Data(Self.device.utf8))
        #expect(put.status == 200)
        #expect(put.text.contains("$UserId:{alice}"))
        #expect(try await storedDocuments() == 1)  // the same probe that finds nothing after bad bodies
        let claim = Self.device.replacingOccurrences(of: #"["World"]"#, with: #"["World","$UserId:{bob}"]"#)
        #expect(try await alice.send("PUT", "/v1/registrations/\(try await newId(alice))", body: Data(claim.utf8)).status == 403)
        #expect(try await bob.send("GET", "/v1/registrations/\(id)").status == 403)
        #expect(
            try await client(listen).send("PUT", "/v1/registrations/\(try await newId(client(listen)))", body: Data(claim.utf8)).status
                == 403)
        #expect(try await alice.send("POST", "/v1/notifications", body: Data(#"{"tags":"World"}"#.utf8)).status == 403)
    }

    @Test("a hub made through the API takes its own keys at once, keeps its devices apart, and herald hubs sees it")
    func hubsThroughTheAPIAndTheCommandLine() async throws {
        let created = try await client(full).send("PUT", "/v1/hubs/sports", body: Data(#"{"limits":{"sendsPerMinute":100}}"#.utf8))
        #expect(created.status == 201, "\(created.text)")
        let keys = try await client(full).send("POST", "/v1/hubs/sports/policies/DefaultListenSharedAccessSignature/keys")
        let document = try JSONValue.parse(Array(keys.body))
        guard case .string(let key)? = document["primaryKey"], case .string(let connection)? = document["primaryConnectionString"] else {
            Issue.record("no keys: \(keys.text)")
            return
        }
        #expect(
            connection
                == "Endpoint=sb://\(base.host!):\(base.port!)/;SharedAccessKeyName=DefaultListenSharedAccessSignature;SharedAccessKey=\(key)"
        )
        let device = HeraldHTTPClient.signed(base, (name: "DefaultListenSharedAccessSignature", key: key))
        let issued = try await device.send("POST", "/v1/hubs/sports/registrationIDs")
        #expect(issued.status == 201)
        let path = try #require(issued.header("Location"))
        #expect(path.hasPrefix("/v1/hubs/sports/registrations/"))
        let before = try await storedDocuments()
        let stored = try await device.send("PUT", path, body: Data(Self.device.utf8))
        #expect(stored.status == 200, "\(stored.text)")
        #expect(stored.text.hasPrefix(#"{"hub":"sports","#))
        #expect(try await device.send("GET", path).status == 200)
        #expect(try await device.send("POST", "/v1/registrationIDs").status == 401, "a hub's key is not the default hub's")
        #expect(try await storedDocuments() == before, "nothing in the default hub's keys")
        let connectionToRedis = try await RedisConnection.connect(configuration: RedisConfiguration(url: redis.url))
        defer { connectionToRedis.close() }
        #expect(try await connectionToRedis.send(RedisCommand("KEYS", "herald@sports:{*}:doc:*")).array?.count == 1)

        let environment = ["HERALD_KAFKA_BROKERS": broker.bootstrapServers, "HERALD_HUB_URI": base.absoluteString]
        let listed = try HeraldBinary.run(["hubs", "list"], environment: environment)
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stdout.contains("sports  version=1  sendsPerMinute=100"), "\(listed.stdout)")
        let printed = try HeraldBinary.run(["hubs", "keys", "sports", "DefaultListenSharedAccessSignature"], environment: environment)
        #expect(printed.stdout.contains(connection), "\(printed.stdout)")
        let again = try HeraldBinary.run(["hubs", "create", "sports"], environment: environment)
        #expect(again.status != 0)
        #expect(again.stderr.contains("hub sports exists already"), "\(again.stderr)")
        // A hub created by the command line is served by the running API without a restart.
        let made = try HeraldBinary.run(["hubs", "create", "weather"], environment: environment)
        #expect(made.status == 0, "\(made.stderr)")
        #expect(try await client(full).send("POST", "/v1/hubs/weather/registrationIDs").status == 201)
        #expect(try await client(full).send("POST", "/v1/hubs/nowhere/registrationIDs").status == 404)

        // Push credentials from a file: checked as the sender would use them, then written.
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("credentials-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(#"{"webPush":{"privateKey":"bm90LWEta2V5","subject":"mailto:desk@example.com"}}"#.utf8).write(to: file)
        let refused = try HeraldBinary.run(["hubs", "credentials", "weather", "--file", file.path], environment: environment)
        #expect(refused.status != 0 && refused.stderr.contains("credentials.webPush.privateKey"), "\(refused.stderr)")
        try Data(#"{"wns":{"packageSid":"ms-app://s-1-15-2-weather","clientSecret":"wns-secret"}}"#.utf8).write(to: file)
        let set = try HeraldBinary.run(["hubs", "credentials", "weather", "--file", file.path], environment: environment)
        #expect(set.status == 0 && set.stdout.contains("wns: ms-app://s-1-15-2-weather"), "\(set.stdout)\(set.stderr)")
        let shown = try HeraldBinary.run(["hubs", "show", "weather"], environment: environment)
        #expect(shown.stdout.contains("version=2") && shown.stdout.contains("wns: ms-app://s-1-15-2-weather"), "\(shown.stdout)")
        #expect(!shown.stdout.contains("wns-secret"))

        // Frequency caps: a bad rule is refused naming it; good ones are written and shown;
        // `none` removes them.
        let badCaps = try HeraldBinary.run(["hubs", "caps", "weather", "3/86400,0/60"], environment: environment)
        #expect(badCaps.status != 0 && badCaps.stderr.contains("frequencyCaps[1].maxAlerts"), "\(badCaps.stderr)")
        let caps = try HeraldBinary.run(["hubs", "caps", "weather", "3/86400,1/3600:bulk"], environment: environment)
        #expect(caps.status == 0 && caps.stdout.contains("frequency caps: 3/86400,1/3600:bulk"), "\(caps.stdout)\(caps.stderr)")
        let capsShown = try HeraldBinary.run(["hubs", "show", "weather"], environment: environment)
        #expect(capsShown.stdout.contains("frequency caps: 3/86400,1/3600:bulk"), "\(capsShown.stdout)")
        let removed = try HeraldBinary.run(["hubs", "caps", "weather", "none"], environment: environment)
        #expect(removed.status == 0 && !removed.stdout.contains("frequency caps"), "\(removed.stdout)")

        // A deleted hub's devices come back with a hub of its name, unless it was purged: the
        // purge writes their deletions to the log, which a reindex (or an indexer) applies.
        let withRedis = environment.merging(["HERALD_REDIS_URL": redis.url]) { $1 }
        let early = try HeraldBinary.run(["hubs", "purge", "sports"], environment: withRedis)
        #expect(early.status != 0 && early.stderr.contains("delete it first"), "\(early.stderr)")
        // The API follows the hubs topic: it serves a change a moment after it is written.
        func hubsChange(_ what: String, _ status: Int) async throws {
            try await waitUntilTrue("the API to see \(what)") { try await client(full).send("GET", path).status == status }
        }
        #expect(try HeraldBinary.run(["hubs", "delete", "sports"], environment: environment).status == 0)
        try await hubsChange("the hub deleted (its routes answer 404)", 404)
        #expect(try await client(full).send("PUT", "/v1/hubs/sports").status == 201)
        try await hubsChange("the hub again, and, not purged, its device", 200)
        #expect(try HeraldBinary.run(["hubs", "delete", "sports"], environment: environment).status == 0)
        try await hubsChange("the hub deleted again", 404)
        let purged = try HeraldBinary.run(["hubs", "purge", "sports"], environment: withRedis)
        #expect(
            purged.status == 0 && purged.stdout.contains("1 registrations and 0 installations deleted"), "\(purged.stdout)\(purged.stderr)")
        let reindexed = try HeraldBinary.run(["reindex", "--registrations-only"], environment: withRedis, timeout: 300)
        #expect(reindexed.status == 0, "\(reindexed.stderr)")
        #expect(try await client(full).send("PUT", "/v1/hubs/sports").status == 201)
        try await waitUntilTrue("the API to serve the hub again") {
            try await client(full).send("GET", "/v1/hubs/sports").status == 200
        }
        let after = try await client(full).send("GET", path)
        #expect(after.status == 404 || after.status == 410, "purged, the device stays gone: \(after.status) \(after.text)")
        let again2 = try HeraldBinary.run(["hubs", "purge", "nowhere"], environment: withRedis)
        #expect(again2.status == 0 && again2.stdout.contains("0 registrations"), "purging what has nothing is a no-op: \(again2.stdout)")
    }
}
