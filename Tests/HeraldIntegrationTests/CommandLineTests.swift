import Foundation
import HeraldAPI
@testable import HeraldApp
import HeraldKafka
import HeraldTestSupport
import Prometheus
import Testing

@Suite("herald command line", .heavy, .enabled(if: HeraldBinary.isBuilt, "build the herald executable first (swift build --build-tests)"))
struct CommandLineTests {
    @Test("herald version reports a librdkafka runtime >= 2.2 and the hiredis in use")
    func version() throws {
        let output = try HeraldBinary.run(["version"])
        #expect(output.status == 0, "\(output.stderr)")
        let line = try #require(output.stdout.split(separator: "\n").first { $0.hasPrefix("librdkafka: ") })
        let parts = line.dropFirst("librdkafka: ".count).split(separator: ".").compactMap { Int($0) }
        #expect(parts.count >= 2)
        #expect(parts.lexicographicallyPrecedes([2, 2]) == false, "loaded librdkafka \(line) is older than 2.2")
        #expect(output.stdout.contains("hiredis: "))
    }

    @Test("herald publish refuses a time the planner would dead-letter, naming the field, before publishing anything")
    func publishRefusesBadTimes() throws {
        let past = try HeraldBinary.run(
            ["publish", "--at", "2020-01-01T07:30:00Z", "--property", "News_English=x"],
            environment: ["HERALD_KAFKA_BROKERS": "127.0.0.1:1"])
        #expect(past.status != 0 && past.stderr.contains("sendAt:") && past.stderr.contains("in the past"), "\(past.stderr)")
        let both = try HeraldBinary.run(
            ["publish", "--at", "2030-01-01T07:30:00Z", "--at-local", "2030-01-01T07:30:00"],
            environment: ["HERALD_KAFKA_BROKERS": "127.0.0.1:1"])
        #expect(both.status != 0 && both.stderr.contains("sendAtLocal:") && both.stderr.contains("not both"), "\(both.stderr)")
    }

    @Test("herald correct refuses a correction with nothing to correct, or both text and a withdrawal, naming the field, before connecting")
    func correctRefusesBadRequests() throws {
        let environment = ["HERALD_KAFKA_BROKERS": "127.0.0.1:1", "HERALD_REDIS_URL": "redis://127.0.0.1:1"]
        let nothing = try HeraldBinary.run(["correct", "bn-1"], environment: environment)
        #expect(
            nothing.status != 0 && nothing.stderr.contains("properties") && nothing.stderr.contains("nothing to correct"),
            "\(nothing.stderr)")
        let both = try HeraldBinary.run(["correct", "bn-1", "--withdraw", "--property", "News_English=x"], environment: environment)
        #expect(both.status != 0 && both.stderr.contains("withdraw") && both.stderr.contains("carries no new text"), "\(both.stderr)")
        let malformed = try HeraldBinary.run(["correct", "bn-1", "--property", "News_English"], environment: environment)
        #expect(malformed.status != 0 && malformed.stderr.contains("--property expects NAME=VALUE"), "\(malformed.stderr)")
    }

    @Test(
        "outside the embedded stack, herald api and herald worker refuse demo keys, a missing id secret and short keys, naming the setting and never the value",
        arguments: [
            (
                ["api"],
                [
                    "HERALD_POLICIES": "Full:listen+send+manage:ZnVsbC1rZXktY2hhbmdlLW1l",
                    "HERALD_ID_SECRET": String(repeating: "s", count: 40),
                ],
                "HERALD_POLICIES holds the key of policy Full published in Herald's demo files"
            ),
            (
                ["api"], ["HERALD_POLICIES": "Full:listen+send+manage:" + String(repeating: "k", count: 40)],
                "HERALD_ID_SECRET is not set"
            ),
            (
                ["api"], ["HERALD_POLICIES": "Full:send:short-key", "HERALD_ID_SECRET": String(repeating: "s", count: 40)],
                "HERALD_POLICIES holds the key of policy Full of 9 bytes; at least 32 are required"
            ),
            (
                ["worker"], ["HERALD_USER_TOKEN_KEY": "user-token-key-change-me-at-least-32-bytes"],
                "HERALD_USER_TOKEN_KEY holds the user-token key published in Herald's demo files"
            ),
            (
                ["worker"], ["HERALD_ID_SECRET": "id-secret-change-me"],
                "HERALD_ID_SECRET holds the registration-id secret published in Herald's demo files"
            ),
        ] as [([String], [String: String], String)]
    )
    func unsafeSecretsStopStartUp(command: [String], environment: [String: String], message: String) throws {
        let output = try HeraldBinary.run(
            command + ["--kafka-brokers", "127.0.0.1:1", "--redis-url", "redis://127.0.0.1:1"], environment: environment, timeout: 30
        )
        #expect(output.status != 0)
        #expect(output.stderr.contains(message), "\(output.stderr)")
        for value in environment.values where value.count > 8 {
            #expect(!output.stderr.contains(value.split(separator: ":").last.map(String.init) ?? value), "a secret was printed")
        }
        // The same settings are accepted on the embedded stack.
        let allowed = try HeraldBinary.run(
            command + ["--kafka-brokers", "127.0.0.1:1", "--redis-url", "redis://:hunter2-password@127.0.0.1:1", "--redis-pool-size", "x"],
            environment: environment.merging(["HERALD_ALLOW_DEMO_KEYS": "true"]) { $1 }, timeout: 30
        )
        #expect(!allowed.stderr.contains(message), "\(allowed.stderr)")
    }

    @Test("the API's bind address defaults to loopback in the settings and in APIConfiguration alike")
    func apiHostDefaultsAgree() throws {
        let setting = try #require(Setting.all.first { $0.key == .apiHost })
        #expect(setting.defaultValue == "127.0.0.1")
        #expect(APIConfiguration().host == setting.defaultValue)
    }

    @Test("a malformed or out-of-range partition count stops start-up naming the setting, never falls back to the default")
    func partitionCountsAreChecked() throws {
        for (value, expected) in [("eight", "a partition count from 1 to 10000"), ("0", "a partition count from 1 to 10000")] {
            let settings = HeraldSettings(environment: ["HERALD_TASK_PARTITIONS": value], endpointsFile: nil)
            let error = #expect(throws: SettingError.self) { try settings.topics }
            #expect(error?.description == "invalid value '\(value)' for --task-partitions (HERALD_TASK_PARTITIONS): expected \(expected)")
            #expect(throws: SettingError.self) { try settings.pipelineConfiguration() }
        }
        let good = HeraldSettings(environment: ["HERALD_TASK_PARTITIONS": "12", "HERALD_REPLICATION_FACTOR": "3"], endpointsFile: nil)
        #expect(try good.topics.tasksPartitions == 12)
        #expect(try good.topics.replicationFactor == 3)
    }

    @Test("every numeric setting has its range: a value outside it stops start-up with one line naming the setting")
    func numericSettingsHaveRanges() throws {
        let registry = PrometheusCollectorRegistry()
        let cases: [(variable: String, value: String, flag: String, expected: String, read: (HeraldSettings) throws -> Void)] = [
            (
                "HERALD_REGISTRATION_PARTITIONS", "99999", "--registration-partitions", "a partition count from 1 to 10000",
                { _ = try $0.registryConfiguration() }
            ),
            (
                "HERALD_SESSION_TIMEOUT_MS", "10", "--session-timeout-ms", "milliseconds from 1000 to 3600000",
                { _ = try $0.pipelineConfiguration() }
            ),
            (
                "HERALD_TASKS_PER_BROADCAST", "0", "--tasks-per-broadcast", "a task count from 1 to 10000",
                { _ = try $0.pipelineConfiguration() }
            ),
            ("HERALD_LINGER_MS", "-1", "--linger-ms", "milliseconds from 0 to 900000", { _ = try $0.pipelineConfiguration() }),
            ("HERALD_SLOTS", "0", "--slots", "a slot count from 1 to 16384", { _ = try $0.registryConfiguration() }),
            ("HERALD_REDIS_POOL_SIZE", "0", "--redis-pool-size", "connections from 1 to 1024", { _ = try $0.redisPoolSize() }),
            (
                "HERALD_API_PORT", "70000", "--api-port", "a port from 1 to 65535",
                { _ = try APIRunner(settings: $0, registry: registry).apiConfiguration() }
            ),
        ]
        for (variable, value, flag, expected, read) in cases {
            let settings = HeraldSettings(environment: [variable: value], endpointsFile: nil)
            let error = #expect(throws: SettingError.self) { try read(settings) }
            #expect(error?.description == "invalid value '\(value)' for \(flag) (\(variable)): expected \(expected)", "\(variable)")
        }
    }

    @Test("the test send's wait comes from its setting, and a wait out of range stops the API at start-up naming it")
    func testSendWaitIsASetting() throws {
        let registry = PrometheusCollectorRegistry()
        let byDefault = APIRunner(settings: HeraldSettings(environment: [:], endpointsFile: nil), registry: registry)
        #expect(try byDefault.apiConfiguration().testSendWait == .seconds(15))
        let longer = APIRunner(
            settings: HeraldSettings(environment: ["HERALD_TEST_SEND_WAIT_SECONDS": "120"], endpointsFile: nil), registry: registry)
        #expect(try longer.apiConfiguration().testSendWait == .seconds(120))
        for value in ["0", "301", "soon"] {
            let wrong = APIRunner(
                settings: HeraldSettings(environment: ["HERALD_TEST_SEND_WAIT_SECONDS": value], endpointsFile: nil), registry: registry)
            let error = #expect(throws: SettingError.self) { try wrong.apiConfiguration() }
            #expect(
                error?.description
                    == "invalid value '\(value)' for --test-send-wait-seconds (HERALD_TEST_SEND_WAIT_SECONDS): expected seconds from 1 to 300"
            )
        }
    }

    @Test("herald-local push-sandbox prints the sender's settings for its local servers, which answer, and stops on SIGTERM")
    func pushSandbox() async throws {
        try #require(HeraldBinary.isLocalBuilt, "build herald-local first")
        let sandbox = try HeraldBinary.start(["push-sandbox"], executable: HeraldBinary.localPath)
        defer { sandbox.signal(SIGKILL) }
        try await waitUntilTrue("the sandbox printed its settings") { sandbox.stdout().contains("(Ctrl-C stops the servers)") }
        var settings: [String: String] = [:]
        for line in sandbox.stdout().split(separator: "\n") where line.hasPrefix("export ") {
            let pair = line.dropFirst("export ".count).split(separator: "=", maxSplits: 1)
            settings[String(pair[0])] = String(pair[1])
        }
        for key in [
            "HERALD_APNS_ENDPOINT", "HERALD_APNS_KEY_FILE", "HERALD_FCM_ENDPOINT", "HERALD_FCM_SERVICE_ACCOUNTS", "HERALD_PUSH_CA_FILE",
            "HERALD_WEBPUSH_VAPID_KEY", "HERALD_WEBPUSH_VAPID_SUBJECT", "HERALD_WNS_PACKAGE_SID", "HERALD_WNS_ENDPOINT",
        ] {
            #expect(settings[key] != nil, "\(key) missing: \(sandbox.stdout())")
        }
        let keyFile = try #require(settings["HERALD_APNS_KEY_FILE"])
        #expect(FileManager.default.fileExists(atPath: keyFile))
        let port = try #require(settings["HERALD_APNS_ENDPOINT"].flatMap { $0.split(separator: ":").last }.flatMap { Int($0) })
        #expect(isAcceptingConnections(port: port))
        sandbox.signal(SIGTERM)
        #expect(sandbox.waitForExit(timeout: 60), "the sandbox did not stop on SIGTERM")
        #expect(sandbox.process.terminationStatus == 0)
        #expect(!FileManager.default.fileExists(atPath: keyFile), "its credentials were left behind")
    }

    @Test("herald worker --help names every role and the settings a worker needs, with their variables and defaults")
    func workerHelpIsComplete() throws {
        let help = try HeraldBinary.run(["worker", "--help"])
        let text = help.stdout + help.stderr
        for role in ["planner", "fanout", "indexer", "scheduler", "sender"] { #expect(text.contains(role), "\(role): \(text)") }
        for setting in ["--roles", "HERALD_ROLES", "--metrics-port", "HERALD_METRICS_PORT", "--redis-url", "--kafka-brokers"] {
            #expect(text.contains(setting), "\(setting): \(text)")
        }
    }

    @Test("leave-group-on-close reaches every consumer Herald builds; a value that is not a boolean stops start-up naming the setting")
    func leaveGroupOnCloseIsTyped() throws {
        let off = HeraldSettings(environment: ["HERALD_LEAVE_GROUP_ON_CLOSE": "false"], endpointsFile: nil)
        #expect(try off.pipelineConfiguration().leaveGroupOnClose == false)
        #expect(try off.consumerConfiguration(groupId: "g", clientId: "c").leaveGroupOnClose == false)
        let on = HeraldSettings(environment: [:], endpointsFile: nil)
        #expect(try on.pipelineConfiguration().leaveGroupOnClose == true)
        let malformed = HeraldSettings(environment: ["HERALD_LEAVE_GROUP_ON_CLOSE": "sometimes"], endpointsFile: nil)
        let error = #expect(throws: SettingError.self) { try malformed.pipelineConfiguration() }
        #expect(
            error?.description
                == "invalid value 'sometimes' for --leave-group-on-close (HERALD_LEAVE_GROUP_ON_CLOSE): expected true or false")
    }

    @Test("herald config and setting errors never print a Redis password; rediss:// is refused with the reason")
    func redisPasswordsAreRedacted() throws {
        let config = try HeraldBinary.run(["config", "--redis-url", "redis://:s3cret-pass@10.1.2.3:6380/2"])
        #expect(config.stdout.contains("HERALD_REDIS_URL=redis://:***@10.1.2.3:6380/2"), "\(config.stdout)")
        #expect(!config.stdout.contains("s3cret-pass"))
        let badPort = try HeraldBinary.run(
            ["worker", "--kafka-brokers", "127.0.0.1:1", "--redis-url", "redis://user:s3cret-pass@host:notaport"], timeout: 30
        )
        #expect(badPort.status != 0)
        #expect(badPort.stderr.contains("redis://user:***@host:notaport"), "\(badPort.stderr)")
        #expect(!badPort.stderr.contains("s3cret-pass"))
        let tls = try HeraldBinary.run(
            ["worker", "--kafka-brokers", "127.0.0.1:1", "--redis-url", "rediss://:s3cret-pass@host:6380"], timeout: 30)
        #expect(tls.status != 0)
        #expect(tls.stderr.contains("rediss:// (Redis over TLS) is not supported"), "\(tls.stderr)")
        #expect(!tls.stderr.contains("s3cret-pass"))
    }

    @Test("a Redis URL that does not fit the server stops worker, api and reindex at start-up with one line")
    func redisTopologyMismatch() throws {
        let closed = freeLocalPort()
        let single = try TestRedis()
        let cases: [(String, String)] = [
            ("redis+cluster://127.0.0.1:\(closed)", "no cluster node answered: 127.0.0.1:\(closed)"),
            ("redis+cluster://127.0.0.1:\(single.port)", "use redis://127.0.0.1:\(single.port) for a single Redis"),
        ]
        for (url, message) in cases {
            for command in [["worker"], ["api"], ["reindex"]] {
                let output = try HeraldBinary.run(
                    command + ["--kafka-brokers", "127.0.0.1:1", "--redis-url", url],
                    environment: ["HERALD_ALLOW_DEMO_KEYS": "true"], timeout: 60)
                #expect(output.status != 0)
                #expect(output.stderr.contains(message), "\(command) \(url): \(output.stderr)")
            }
        }
    }

    @Test("a sender without credentials, or with a missing or malformed one, stops at start-up naming the file and the field")
    func senderCredentials() throws {
        let redis = try TestRedis()
        defer { redis.stop() }
        let directory = try ToolPaths.scratchDirectory("sender-credentials")
        defer { try? FileManager.default.removeItem(at: directory) }
        let garbage = directory.appendingPathComponent("AuthKey_ABC123DEFG.p8")
        try Data("not a key".utf8).write(to: garbage)
        let account = directory.appendingPathComponent("sa.json")
        try Data(#"{"type":"service_account","project_id":"news","client_email":"s@news.iam.gserviceaccount.com"}"#.utf8).write(
            to: account)
        let apns = ["HERALD_APNS_KEY_ID": "ABC123DEFG", "HERALD_APNS_TEAM_ID": "TEAM123456", "HERALD_APNS_TOPICS": "com.example.news"]
        let cases: [([String: String], String)] = [
            ([:], "credentials for the sender role"),
            (
                apns.merging(["HERALD_APNS_KEY_FILE": "/nonexistent/AuthKey.p8"]) { $1 },
                "/nonexistent/AuthKey.p8: cannot read the APNs key file"
            ),
            (apns.merging(["HERALD_APNS_KEY_FILE": garbage.path]) { $1 }, "\(garbage.path): PEM: not a .p8 key"),
            (["HERALD_APNS_KEY_FILE": garbage.path], "HERALD_APNS_KEY_ID"),
            (["HERALD_FCM_SERVICE_ACCOUNTS": account.path], "\(account.path): private_key: missing or not a string"),
            (
                ["HERALD_WEBPUSH_VAPID_KEY": "not a key", "HERALD_WEBPUSH_VAPID_SUBJECT": "mailto:desk@example.com"],
                "HERALD_WEBPUSH_VAPID_KEY: private key: not a 32-byte base64url P-256 private key or a PEM block"
            ),
            (["HERALD_WEBPUSH_VAPID_KEY": "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw"], "HERALD_WEBPUSH_VAPID_SUBJECT"),
            (["HERALD_WNS_PACKAGE_SID": "ms-app://s-1-15-2-1"], "HERALD_WNS_CLIENT_SECRET"),
        ]
        for (settings, message) in cases {
            let output = try HeraldBinary.run(
                ["worker"],
                environment: settings.merging([
                    "HERALD_ROLES": "sender", "HERALD_ALLOW_DEMO_KEYS": "true", "HERALD_REDIS_URL": redis.url,
                    "HERALD_KAFKA_BROKERS": "127.0.0.1:1", "HERALD_METRICS_PORT": "0",
                ]) { $1 }, timeout: 60)
            #expect(output.status != 0)
            #expect(output.stderr.contains(message), "\(settings): \(output.stderr.suffix(600))")
            #expect(!output.stderr.contains("not a key"), "the key file's content was printed")
        }
    }

    @Test("an unreadable registration record is dead-lettered by the worker's indexer with its reason, and herald dlq lists it")
    func unreadableRegistrationIsDeadLettered() async throws {
        let broker = try TestBroker()
        let redis = try TestRedis()
        defer {
            broker.stop()
            redis.stop()
        }
        let prefix = TestBroker.uniqueName("dlqreg")
        let environment = [
            "HERALD_KAFKA_BROKERS": broker.bootstrapServers, "HERALD_REDIS_URL": redis.url, "HERALD_TOPIC_PREFIX": prefix + ".herald.",
            "HERALD_REDIS_PREFIX": prefix, "HERALD_ROLES": "indexer", "HERALD_METRICS_PORT": "0",
            "HERALD_SESSION_TIMEOUT_MS": String(TestBroker.sessionTimeoutMs),
        ]
        let worker = try HeraldBinary.start(["worker"], environment: environment)
        defer {
            worker.signal(SIGTERM)
            _ = worker.waitForExit(timeout: 30)
        }
        try await waitUntilTrue("the indexer to start") { worker.stderr().contains("indexer started") }
        let producer = try KafkaProducer(configuration: KafkaProducerConfiguration(bootstrapServers: broker.bootstrapServers))
        _ = try await producer.send(
            KafkaOutgoingMessage(topic: prefix + ".herald.registrations", key: Array("broken".utf8), value: Array("{not json".utf8)))
        await producer.shutdown()
        var listed = ""
        try await waitUntilTrue("herald dlq to list the dead letter") {
            listed = try HeraldBinary.run(["dlq", "list"], environment: environment, timeout: 60).stdout
            return listed.contains("unreadable_registration")
        }
        #expect(listed.contains("unreadable_registration from \(prefix).herald.registrations["), "\(listed)")
        #expect(listed.contains("registration value is not JSON"), "\(listed)")
        #expect(listed.contains("original: {not json"), "\(listed)")
        #expect(worker.process.isRunning, "\(worker.stderr().suffix(2_000))")
    }

    @Test("setting flags come from the one settings table: both spellings, flag over environment, arguments around them intact")
    func settingFlags() throws {
        let config = try HeraldBinary.run(
            ["config", "--roles=planner", "--redis-pool-size", "7"], environment: ["HERALD_REDIS_POOL_SIZE": "3", "HERALD_LINGER_MS": "9"]
        )
        #expect(config.status == 0, "\(config.stderr)")
        for line in ["HERALD_ROLES=planner", "HERALD_REDIS_POOL_SIZE=7", "HERALD_LINGER_MS=9"] {
            #expect(config.stdout.split(separator: "\n").contains { $0 == line }, "\(line) missing in \(config.stdout)")
        }
        // A setting flag between a command and its positional argument takes its own value only.
        let expression = try HeraldBinary.run(["expr", "check", "--log-level", "debug", "A||B"])
        #expect(expression.stdout == "A || B\n", "\(expression.stderr)")

        let missing = try HeraldBinary.run(["config", "--roles"])
        #expect(missing.status != 0)
        #expect(missing.stderr.contains("missing value for --roles (HERALD_ROLES)"), "\(missing.stderr)")
        let unknown = try HeraldBinary.run(["config", "--rolez", "planner"])
        #expect(unknown.status != 0)
        #expect(unknown.stderr.contains("Unknown option '--rolez'"), "\(unknown.stderr)")
    }

    @Test("expr check prints the canonical form, or the error with a caret and a non-zero exit")
    func exprCheck() throws {
        let good = try HeraldBinary.run(["expr", "check", "( World||Politics )&&!Sports"])
        #expect(good.status == 0)
        #expect(good.stdout == "(World || Politics) && !Sports\n")

        let bad = try HeraldBinary.run(["expr", "check", "(World || "])
        #expect(bad.status != 0)
        #expect(bad.stderr.contains("column 11"))
        #expect(bad.stderr.contains("          ^"))
    }

    @Test("expr eval answers true or false for a tag set")
    func exprEval() throws {
        let expression = "(follows_RedSox || follows_Cardinals) && location_Boston"
        #expect(try HeraldBinary.run(["expr", "eval", expression, "--tags", "follows_RedSox,location_Boston"]).stdout == "true\n")
        #expect(try HeraldBinary.run(["expr", "eval", expression, "--tags", "follows_RedSox"]).stdout == "false\n")
    }

    @Test("render prints the rendered body, and a template error with its position")
    func render() throws {
        let output = try HeraldBinary.run([
            "render", "--template", #"{"aps":{"alert":"$(News_French)"},"inAppMessage":"$(News_French)"}"#,
            "--properties", #"{"News_French":"Fin du sommet"}"#,
        ])
        #expect(output.stdout == #"{"aps":{"alert":"Fin du sommet"},"inAppMessage":"Fin du sommet"}"# + "\n")
        let bad = try HeraldBinary.run(["render", "--template", #"{"aps":{"alert":"$(News"}}"#])
        #expect(bad.status != 0)
        #expect(bad.stderr.contains("column"))
    }

    @Test(
        "a bad setting value stops the worker before it connects, naming the flag, the variable and what is allowed",
        arguments: [
            ("--narrow-events", "sideways", "'sideways' for --narrow-events (HERALD_NARROW_EVENTS): expected planner or express-lane"),
            (
                "--task-fetch-wait-ms", "soon",
                "'soon' for --task-fetch-wait-ms (HERALD_TASK_FETCH_WAIT_MS): expected milliseconds from 0 to 300000"
            ),
            (
                "--task-fetch-wait-ms", "-5",
                "'-5' for --task-fetch-wait-ms (HERALD_TASK_FETCH_WAIT_MS): expected milliseconds from 0 to 300000"
            ),
            (
                "--planner-fetch-wait-ms", "400000",
                "'400000' for --planner-fetch-wait-ms (HERALD_PLANNER_FETCH_WAIT_MS): expected milliseconds from 0 to 300000"
            ),
            ("--bulk-lanes", "0", "'0' for --bulk-lanes (HERALD_BULK_LANES): expected a lane count from 1 to 64"),
            ("--bulk-lanes", "two", "'two' for --bulk-lanes (HERALD_BULK_LANES): expected a lane count from 1 to 64"),
            (
                "--kafka-config-file", "/nonexistent/kafka.properties",
                "'/nonexistent/kafka.properties' for --kafka-config-file (HERALD_KAFKA_CONFIG_FILE): expected a readable UTF-8 file of key=value lines"
            ),
        ]
    )
    func badSettingValue(flag: String, value: String, message: String) throws {
        let output = try HeraldBinary.run([
            "worker", "\(flag)=\(value)", "--kafka-brokers", "127.0.0.1:1", "--redis-url", "redis://127.0.0.1:1",
        ])
        #expect(output.status != 0)
        #expect(output.stderr.contains(message), "\(output.stderr)")
    }

    /// The properties file reaches every Kafka client: a line that is not `key=value` is
    /// refused with its number, and a property librdkafka rejects stops the worker naming it.
    @Test("a Kafka properties file is checked line by line, and its properties reach librdkafka")
    func kafkaConfigFile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-kafka-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let malformed = directory.appendingPathComponent("malformed.properties")
        try "# SASL for the production cluster\n\nsecurity.protocol=SASL_SSL\nsasl.mechanism PLAIN\n".write(
            to: malformed, atomically: true, encoding: .utf8)
        let bogus = directory.appendingPathComponent("bogus.properties")
        try "  security.protocol = carrier-pigeon  \n".write(to: bogus, atomically: true, encoding: .utf8)
        let common = ["--kafka-brokers", "127.0.0.1:1", "--redis-url", "redis://127.0.0.1:1", "--roles", "planner"]

        let lineError = try HeraldBinary.run(["worker", "--kafka-config-file", malformed.path] + common)
        #expect(lineError.status != 0)
        #expect(lineError.stderr.contains("line 4 is 'sasl.mechanism PLAIN'"), "\(lineError.stderr)")

        let rejected = try HeraldBinary.run(["worker", "--kafka-config-file", bogus.path] + common)
        #expect(rejected.status != 0)
        #expect(rejected.stderr.contains("security.protocol=carrier-pigeon rejected"), "\(rejected.stderr)")
    }

    @Test(
        "the Kafka properties file: comments and blank lines skipped, whitespace trimmed, '=' allowed in values, credentials never echoed")
    func kafkaPropertiesParsing() throws {
        let text = """
            # cluster
              security.protocol = SASL_SSL

            sasl.jaas.config=org.example.Login required user="a" token="b==";
            empty.value=
            """
        let properties = try HeraldSettings.parseKafkaProperties(text, path: "k.properties")
        #expect(
            properties == [
                "security.protocol": "SASL_SSL",
                "sasl.jaas.config": #"org.example.Login required user="a" token="b==";"#,
                "empty.value": "",
            ])
        let error = #expect(throws: SettingError.self) {
            try HeraldSettings.parseKafkaProperties("a=b\nsasl.password hunter2\n", path: "k.properties")
        }
        #expect(error?.description.contains("line 2") == true)
        #expect(error?.description.contains("hunter2") == false)
        #expect(throws: SettingError.self) { try HeraldSettings.parseKafkaProperties("=value\n", path: "k.properties") }
    }

    /// The API's producer sends records a caller waits for; the lanes' batching delay must
    /// not reach it (it once added up to 25 ms to every registration write and publish).
    @Test("--linger-ms sets the bulk lanes' linger and not the API's producer, which sends at once")
    func lingerIsTheLanesOnly() throws {
        let settings = HeraldSettings(flags: [.lingerMs: "1000"], environment: [:], endpointsFile: nil)
        #expect(try settings.pipelineConfiguration().deliveryLingerMs == 1_000)
        // A lane that partitions by key lingers at most 25 ms: its batches only leave by linger.
        let short = try HeraldSettings(flags: [.lingerMs: "10"], environment: [:], endpointsFile: nil).pipelineConfiguration()
        #expect(short.deliveryLingerMs(onePartitionPerTask: true) == 10)
        #expect(short.deliveryLingerMs(onePartitionPerTask: false) == 10)
        let byDefault = try HeraldSettings(flags: [:], environment: [:], endpointsFile: nil).pipelineConfiguration()
        #expect(byDefault.deliveryLingerMs(onePartitionPerTask: true) == 1_000)
        #expect(byDefault.deliveryLingerMs(onePartitionPerTask: false) == 25)
        #expect(byDefault.deliveryProducerConfiguration(clientId: "c", transactionalId: "t").lingerMs == 1_000)
        #expect(byDefault.deliveryProducerConfiguration(clientId: "c", transactionalId: nil, onePartitionPerTask: false).lingerMs == 25)
        #expect(try settings.reliableProducerConfiguration(clientId: "herald-api").lingerMs == 0)
    }

    @Test("HERALD_ALLOCATOR: tuned by default, glibc on request, the operator's MALLOC_* variables win, anything else is an error")
    func allocatorPlan() throws {
        let byDefault = HeraldSettings(flags: [:], environment: [:], endpointsFile: nil)
        #expect(try byDefault.allocatorPlan(environment: [:]) == .tune(.producer))
        #expect(
            try byDefault.allocatorPlan(environment: ["MALLOC_TRIM_THRESHOLD_": "0"]) == .operatorTuning(variable: "MALLOC_TRIM_THRESHOLD_")
        )
        let glibc = HeraldSettings(flags: [:], environment: ["HERALD_ALLOCATOR": "glibc"], endpointsFile: nil)
        #expect(try glibc.allocatorPlan(environment: [:]) == .glibcDefaults)
        let wrong = HeraldSettings(flags: [.allocator: "jemalloc"], environment: [:], endpointsFile: nil)
        let error = #expect(throws: SettingError.self) { try wrong.allocatorPlan(environment: [:]) }
        #expect(error?.description == "invalid value 'jemalloc' for --allocator (HERALD_ALLOCATOR): expected tuned or glibc")
    }
}

@Suite("glibc malloc thresholds for librdkafka's batch buffers", .heavy)
struct MallocTuningTests {
    @Test("the operator's own glibc malloc variables are found, and nothing else counts")
    func operatorTuning() {
        #expect(MallocTuning.operatorTuning(in: [:]) == nil)
        #expect(MallocTuning.operatorTuning(in: ["MALLOC_ARENA_MAX": "2", "HERALD_ALLOCATOR": "tuned"]) == nil)
        #expect(MallocTuning.operatorTuning(in: ["MALLOC_TRIM_THRESHOLD_": "131072"]) == "MALLOC_TRIM_THRESHOLD_")
        #expect(MallocTuning.operatorTuning(in: ["MALLOC_MMAP_THRESHOLD_": "0"]) == "MALLOC_MMAP_THRESHOLD_")
        #expect(MallocTuning.operatorTuning(in: ["GLIBC_TUNABLES": "glibc.malloc.trim_threshold=1"]) == "GLIBC_TUNABLES")
        #expect(MallocTuning.operatorTuning(in: ["GLIBC_TUNABLES": "glibc.cpu.hwcaps=-AVX2"]) == nil)
    }
}
