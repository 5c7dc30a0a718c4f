import Foundation
import HeraldAPI
import HeraldApp
import HeraldDomain
import HeraldKafka
import HeraldLocalPush
import HeraldStreams
import HeraldTestSupport
import Testing

/// The newsroom console in a real browser: headless Chromium (Debian's, driven by Selenium from
/// PyPI, `console_browser.py`) against the real `herald api` and `herald worker` (sender
/// included, against the local APNs server). What the page shows is checked against the API.
@Suite(
    "the newsroom console in a real browser", .heavy, .serialized,
    .enabled(if: HeraldBinary.isBuilt, "build the herald executable first"))
final class ConsoleBrowserTests {
    let stack: LocalPushStack
    let prefix = TestBroker.uniqueName("console")
    let newsroom = (name: "Newsroom", key: "newsroom-key-for-the-console-tests-0001")
    let devices = (name: "Devices", key: "devices-key-for-the-console-tests-00001")
    let operatorPolicy = (name: "Operator", key: "operator-key-for-the-console-tests-0001")
    /// Where the browser's screenshots go (an ignored folder).
    let screenshots = ToolPaths.repositoryRoot.appendingPathComponent(".herald/test-runs/console").path

    init() async throws { stack = try await LocalPushStack() }

    var api: HeraldHTTPClient { .signed(stack.base, operatorPolicy) }

    func environment(roles: String) -> [String: String] {
        [
            "HERALD_KAFKA_BROKERS": stack.broker.bootstrapServers, "HERALD_REDIS_URL": stack.redis.url,
            "HERALD_TOPIC_PREFIX": prefix + ".herald.", "HERALD_REDIS_PREFIX": prefix, "HERALD_SLOTS": "16",
            "HERALD_INSTANCE_ID": prefix, "HERALD_SESSION_TIMEOUT_MS": String(TestBroker.sessionTimeoutMs), "HERALD_METRICS_PORT": "0",
            "HERALD_API_HOST": "127.0.0.1", "HERALD_API_PORT": String(stack.base.port!), "HERALD_HUB_URI": stack.base.absoluteString,
            "HERALD_POLICIES": [newsroom, devices, operatorPolicy].map { policy in
                let rights = policy.name == "Newsroom" ? "send" : policy.name == "Devices" ? "listen" : "listen+send+manage"
                return "\(policy.name):\(rights):\(policy.key)"
            }.joined(separator: ";"),
            "HERALD_ID_SECRET": "id-secret-for-the-console-tests-0000001", "HERALD_LOG_LEVEL": "notice",
            "HERALD_ROLES": roles,
        ].merging(stack.push.environment) { $1 }
    }

    /// The connection string a newsroom pastes into the console.
    func connection(_ policy: (name: String, key: String)) -> String {
        "Endpoint=sb://127.0.0.1:\(stack.base.port!)/;SharedAccessKeyName=\(policy.name);SharedAccessKey=\(policy.key)"
    }

    /// console_browser.py's session: one headless Chromium for every scenario of the test.
    func startBrowser() throws -> BrowserSession {
        let python = ToolPaths.repositoryRoot.appendingPathComponent(".herald/selenium/bin/python").path
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("console_browser.py").path
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw TestServerError(message: "no Selenium at \(python): run scripts/bootstrap (make test does)")
        }
        return try BrowserSession(
            python: python,
            arguments: [
                script, stack.base.absoluteString, connection(newsroom), connection(devices), connection(operatorPolicy), screenshots,
            ])
    }

    /// Runs one scenario of console_browser.py and returns what it printed; a page that logged
    /// a Content-Security-Policy violation, an uncaught error or a file it could not load fails the test.
    func browser(_ session: BrowserSession, _ scenario: String, _ arguments: [String] = []) async throws -> JSONValue {
        let result = try await session.run([scenario] + arguments)
        if let failure = result["failure"]?.stringValue {
            throw TestServerError(message: "console_browser.py \(scenario) failed: \(failure)\n\(session.process.stderr().suffix(3_000))")
        }
        let errors = result["browserErrors"]?.arrayValue?.compactMap(\.stringValue) ?? []
        // Chromium logs every answer of 400 and up as a failed load. Expected: 400 for the invalid
        // expression the compose scenario types, 403 for the session of the Listen key the sign-in
        // scenario tries. Any other means the page asked for a file that is not there, or called
        // a route its key may not call instead of reading the session's rights.
        let faults = errors.filter { line in
            if line.contains("Content Security Policy") || line.contains("Uncaught") { return true }
            guard line.contains("Failed to load") else { return false }
            let expected =
                line.contains("status of 400") && scenario == "compose"
                || line.contains("/console/session - ")
                    && line.contains("status of 403") && scenario == "signin"
            return !expected
        }
        #expect(faults.isEmpty, "the page logged: \(faults)")
        return result
    }

    /// An APNs installation of one language with its localized template.
    func install(_ id: String, device: Int, language: String, tags: [String]) async throws {
        let template = #"{"aps":{"alert":{"title":"Breaking news","body":"$(News_\#(language))"}}}"#
        let body: [String: Any] = [
            "platform": "apns", "pushChannel": String(repeating: "ab", count: 31) + String(format: "%02x", device), "tags": tags,
            "templates": ["news\(language)": ["body": template]],
        ]
        let reply = try await api.send("PUT", "/v1/installations/\(id)", body: try api.json(body))
        #expect(reply.status == 200, "\(reply.text)")
    }

    /// The status as the API gives it.
    func status(_ id: String) async throws -> JSONValue {
        try JSONValue.parse(Array(try await api.send("GET", "/v1/notifications/\(id)").body))
    }

    @Test(
        "an editor signs in (a Listen key refused), sees an expression's error at its column and then its exact audience, previews three languages, sends and watches it land, corrects it, stops a broadcast in flight, and looks a device up"
    )
    func editorsDay() async throws {
        // The fan-out runs in a process of its own, so a broadcast can be held in flight.
        try stack.start(["worker"], environment: environment(roles: "planner,indexer,scheduler,sender"))
        var fanout = try stack.start(["worker"], environment: environment(roles: "fanout"))
        try stack.start(["api"], environment: environment(roles: "planner"))
        let processes = stack.processes
        try await api.waitUntilReady(attempts: 600) { processes.map { String($0.stderr().suffix(2_000)) }.joined() }
        let languages = ["English", "French", "Mandarin"]
        for index in 0..<9 {
            try await install("reader-\(index)", device: index, language: languages[index % 3], tags: index < 6 ? ["World"] : ["Sports"])
        }
        for index in 0..<3 { try await install("politics-\(index)", device: 9 + index, language: "English", tags: ["Politics"]) }
        // The index holds all twelve before the editor types.
        try await waitWhileProgressing("the devices to be indexed", interval: .milliseconds(200)) {
            () async throws -> ProgressCheck<Int, Void> in
            let listed = try JSONValue.parse(Array(try await api.send("GET", "/v1/installations?tag=World&limit=50").body))
            let count = listed["items"]?.arrayValue?.count ?? 0
            return count == 6 ? .done(()) : .waiting(count)
        }

        let chromium = try startBrowser()
        defer { chromium.close() }
        let signin = try await browser(chromium, "signin")
        #expect(signin["listenRefused"]?.stringValue?.contains("Listen") == true, "\(signin)")
        #expect(signin["session"]?.stringValue?.contains("Newsroom") == true, "\(signin)")

        let compose = try await browser(chromium, "compose")
        #expect(compose["error"]?.stringValue?.contains("column 11") == true, "\(compose)")
        #expect(compose["audience"]?.intValue == 9, "\(compose)")

        let preview = try await browser(chromium, "preview")
        let cards = preview["previews"]?.arrayValue ?? []
        let texts = cards.compactMap { $0["text"]?.stringValue }
        for line in ["Summit ends", "Fin du sommet", "峰会结束"] {
            #expect(texts.contains { $0.contains(line) }, "no preview shows \(line): \(texts)")
        }
        #expect(cards.allSatisfy { $0["overLimit"]?.boolValue == false })

        let sent = try await browser(chromium, "send", ["bn-console-1"])
        let final = try await status("bn-console-1")
        #expect(sent["state"]?.stringValue == "completed" && final["state"]?.stringValue == "completed", "\(sent) \(final)")
        #expect(final["targets"]?["total"]?.intValue == 9, "\(final)")
        #expect(sent["counts"]?["total"]?["targets"]?.intValue == 9, "\(sent)")
        #expect(sent["counts"]?["total"]?["sent"]?.intValue == final["push"]?["apns"]?["sent"]?.intValue, "\(sent) \(final)")
        #expect((sent["curves"]?["curve-committed"]?.intValue ?? 0) >= 1 && (sent["curves"]?["curve-sent"]?.intValue ?? 0) >= 1, "\(sent)")
        #expect(sent["reach"]?.stringValue?.contains("90") == true, "\(sent)")
        #expect(sent["tabletOverflow"]?.boolValue == false, "the alert page scrolls sideways at a tablet's width")
        // Every push answered: nothing is left to stop, and the page does not offer it.
        #expect(sent["stopDisabled"]?.boolValue == true, "\(sent)")

        let corrected = try await browser(chromium, "correct", ["bn-console-1"])
        let correction = try #require(corrected["correction"]?.stringValue, "\(corrected)")
        #expect(correction.hasPrefix("bn-console-1~correction-"), "\(corrected)")
        try await waitWhileProgressing("the correction to complete", interval: .milliseconds(200)) {
            () async throws -> ProgressCheck<String, Void> in
            let state = try await status(correction)["state"]?.stringValue ?? "-"
            return state == "completed" ? .done(()) : .waiting(state)
        }
        #expect(try await status(correction)["targets"]?["total"]?.intValue == 9)

        let recent = try await browser(chromium, "alerts")
        #expect(recent["alerts"]?.strings.contains("bn-console-1") == true, "\(recent)")

        // A broadcast held in flight: no fan-out runs while the editor stops it; once one runs
        // again, its tasks find the stop and deliver nothing more.
        fanout.signal(SIGTERM)
        _ = await fanout.exited(within: 60)
        let stop = try await browser(chromium, "stop", ["bn-console-2"])
        #expect(stop["message"]?.stringValue?.contains("Stop") == true, "\(stop)")
        fanout = try stack.start(["worker"], environment: environment(roles: "fanout"))
        let watched = try await browser(chromium, "watch", ["bn-console-2", "cancelled"])
        #expect(watched["state"]?.stringValue == "cancelled")
        #expect(try await status("bn-console-2")["state"]?.stringValue == "cancelled")

        // An alert of an app whose hub did not exist yet is refused (published straight to the
        // event log, as a newsroom system does); once the operator has made the hub, it is
        // replayed from the console's dead letters and delivered.
        let producer = try KafkaProducer(configuration: KafkaProducerConfiguration(bootstrapServers: stack.broker.bootstrapServers))
        _ = try await producer.send(
            KafkaOutgoingMessage(
                topic: HeraldTopics.prefixed(prefix).events, key: nil,
                value: Array(#"{"hub":"weather","id":"storm-1","properties":{"News_English":"Storm warning"}}"#.utf8)))
        await producer.shutdown()
        // The hub does not exist yet, so the API answers 404 for its routes: the dead letter is
        // read from the topic itself, as the API will read it once the hub exists.
        let letter = try await waitWhileProgressing("the refused alert's dead letter", interval: .milliseconds(200)) {
            () async throws -> ProgressCheck<Int, DeadLetterEntry> in
            var seen = 0
            for try await message in RecordTail(
                topic: HeraldTopics.prefixed(prefix).eventsDeadLetters, bootstrapServers: stack.broker.bootstrapServers
            ).records() {
                seen += 1
                if let value = message.value,
                    let entry = DeadLetterEntry(envelope: value, partition: message.partition, offset: message.offset),
                    entry.eventId == "storm-1"
                {
                    return .done(entry)
                }
            }
            return .waiting(seen)
        }
        #expect(letter.reason == "unknown_hub" && letter.hub.description == "weather", "\(letter)")
        #expect(try await api.send("PUT", "/v1/hubs/weather").status == 201)
        let replayed = try await browser(
            chromium, "deadletters", [String(letter.offset), String(letter.partition), "weather"])
        #expect(replayed["replayed"]?.stringValue == "storm-1", "\(replayed)")
        try await waitWhileProgressing("the replayed alert to be planned", interval: .milliseconds(200)) {
            () async throws -> ProgressCheck<String, Void> in
            let reply = try await api.send("GET", "/v1/hubs/weather/notifications/storm-1")
            return reply.status == 200 ? .done(()) : .waiting(reply.text)
        }

        let lookup = try await browser(chromium, "lookup", ["installation", "reader-1"])
        let found = lookup["results"]?.strings ?? []
        #expect(found.count == 1 && found[0].contains("World") && found[0].contains("APNs"), "\(lookup)")
        // Every reader's and politics device's token starts so (device numbers 0x00 to 0x0b).
        let byStart = try await browser(chromium, "lookup", ["handlePrefix", String(repeating: "ab", count: 31) + "0"])
        #expect(byStart["results"]?.strings.count == 12, "\(byStart)")
        #expect(
            [processes[0], processes[2], fanout].allSatisfy { $0.process.isRunning },
            "a Herald process ended: \(stack.processes.map { $0.stderr().suffix(2_000) })")
    }
}

/// console_browser.py in its session mode: one headless Chromium that runs the scenarios it is
/// sent, a line of JSON each, and answers each with a line on its standard output.
final class BrowserSession: @unchecked Sendable {
    let process: HeraldBinary.Running
    private let input: FileHandle
    private var answered = 0

    init(python: String, arguments: [String]) throws {
        let pipe = Pipe()
        process = try HeraldBinary.start(arguments + ["session"], executable: python, input: pipe.fileHandleForReading)
        input = pipe.fileHandleForWriting
    }

    /// Sends `scenario` (its name, then its arguments) and returns the answer. The script bounds
    /// each of its waits, so a stuck page answers with a failure; an exited script is an error.
    func run(_ scenario: [String]) async throws -> JSONValue {
        var line: [UInt8] = []
        JSONValue.array(scenario.map(JSONValue.string)).write(into: &line)
        try input.write(contentsOf: line + [UInt8(ascii: "\n")])
        while true {
            let lines = process.stdout().split(separator: "\n")
            if lines.count > answered {
                answered += 1
                return try JSONValue.parse(Array(lines[answered - 1].utf8))
            }
            guard process.process.isRunning else {
                throw TestServerError(message: "console_browser.py ended during \(scenario[0]):\n\(process.stderr().suffix(3_000))")
            }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// Ends the session: the script quits the browser once its input ends.
    func close() {
        try? input.close()
        if !process.waitForExit(timeout: 30) { process.process.terminate() }
    }
}
