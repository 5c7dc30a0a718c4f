import Foundation
import HeraldApp
import HeraldTestSupport
import Testing

/// `make run` end to end: the API, every worker role and the seed tutorials' story, in the
/// real executable against a private Redis and broker. With `HERALD_TEST_METRICS_SCRAPE` set
/// (scripts/test-all sets it), the running Herald's `/metrics` is left in that file afterwards:
/// the deployment files are validated against it.
@Suite("make run story", .heavy, .enabled(if: HeraldBinary.isLocalBuilt, "build the herald-local executable first"))
struct DemoStoryTests {
    @Test("every device receives exactly its language, category and payload")
    func story() async throws {
        let redis = try TestRedis()
        let broker = try TestBroker()
        defer {
            broker.stop()
            redis.stop()
        }
        let logFile = FileManager.default.temporaryDirectory.appendingPathComponent("herald-demo-\(UUID().uuidString).log").path
        defer { try? FileManager.default.removeItem(atPath: logFile) }
        let port = freeLocalPort()
        let demo = try HeraldBinary.start(
            [
                "demo", "--keep-running", "--api-port", String(port), "--session-timeout-ms", String(TestBroker.sessionTimeoutMs),
                "--log-file", logFile,
            ],
            environment: ["HERALD_KAFKA_BROKERS": broker.bootstrapServers, "HERALD_REDIS_URL": redis.url],
            executable: HeraldBinary.localPath
        )
        defer {
            demo.signal(SIGTERM)
            _ = demo.waitForExit(timeout: 60)
        }
        // The story ends with how to go on ("… Ctrl-C stops everything cleanly."); the wait fails
        // only when its output stops growing.
        try await waitWhileProgressing("the make run story", interval: .milliseconds(200)) { () async throws -> ProgressCheck<Int, Void> in
            let printed = demo.stdout()
            if printed.contains("Ctrl-C stops everything cleanly") { return .done(()) }
            guard demo.process.isRunning else {
                throw TestServerError(
                    message: "the demo ended with status \(demo.process.terminationStatus):\n\(printed)\n\(demo.stderr().suffix(3000))")
            }
            return .waiting(printed.utf8.count)
        }
        if let scrape = ProcessInfo.processInfo.environment["HERALD_TEST_METRICS_SCRAPE"] {
            // Consumer lag is sampled every 15 s: wait for its first sample (the story often outlasts it).
            let client = HeraldHTTPClient(baseURL: URL(string: "http://127.0.0.1:\(port)")!)
            var metrics = ""
            for _ in 0..<120 where !metrics.contains("herald_consumer_lag{") {
                metrics = try await client.send("GET", "/metrics").text
                if !metrics.contains("herald_consumer_lag{") { try await Task.sleep(for: .milliseconds(500)) }
            }
            try metrics.write(toFile: scrape, atomically: true, encoding: .utf8)
        }
        let output = (stdout: demo.stdout(), stderr: demo.stderr())
        let text = output.stdout
        // The console tells the story: the log is in its file, and a normal run logs no error.
        #expect(text.contains("(the log of the API and the worker roles: \(logFile))"))
        // It ends with the console's address and a key that opens it.
        #expect(text.contains("The newsroom console: http://127.0.0.1:\(port)/console/"), "\(text.suffix(1_000))")
        let connection = try #require(
            text.split(separator: "\n").last { $0.contains("Endpoint=sb://") }.map { $0.trimmingCharacters(in: .whitespaces) },
            "no connection string to sign in with")
        let parts = Dictionary(
            connection.split(separator: ";").compactMap { part -> (String, String)? in
                guard let equals = part.firstIndex(of: "=") else { return nil }
                return (String(part[..<equals]), String(part[part.index(after: equals)...]))
            }, uniquingKeysWith: { $1 })
        let base = URL(string: "http://127.0.0.1:\(port)/")!
        let editor = try #require(parts["SharedAccessKeyName"].flatMap { name in parts["SharedAccessKey"].map { (name: name, key: $0) } })
        let session = try await HeraldHTTPClient.signed(base, editor).send("GET", "/v1/console/session")
        #expect(session.status == 200 && session.text.contains("\"send\""), "\(session.text)")
        let errorLines = (output.stdout + output.stderr).split(separator: "\n").filter { $0.contains(" error ") }
        #expect(errorLines.isEmpty, "error lines on the console:\n\(errorLines.prefix(10).joined(separator: "\n"))")
        let log = (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? ""
        #expect(log.contains(" info "), "the log file holds the info lines")
        // Part 4 lists each device (three spaces) and the payloads it received (six spaces).
        var sections: [String: String] = [:]
        var current: String?
        for line in text.split(separator: "\n").drop(while: { !$0.hasPrefix("4. ") }).dropFirst().prefix(while: { !$0.hasPrefix("5. ") }) {
            if line.hasPrefix("      ") {
                if let current { sections[current, default: ""] += line + "\n" }
            } else if line.hasPrefix("   "), !line.hasPrefix("    ") {
                current = line.trimmingCharacters(in: .whitespaces)
            }
        }
        func received(_ device: String) -> String { sections.first { $0.key.hasPrefix(device) }?.value ?? "" }

        // Localization: each language's devices get exactly their language's text.
        #expect(received("Wei's iPhone").contains("峰会以气候协议结束"))
        #expect(!received("Wei's iPhone").contains("Summit ends"))
        #expect(received("Amélie's iPad").contains("Le sommet se termine"))
        #expect(!received("Amélie's iPad").contains("峰会"))
        // Tag expression (World || Politics) && !Sports: Kenji (World, Politics) yes, Amélie (Sports) no.
        #expect(received("Kenji's iPhone").contains("expression:"))
        #expect(!received("Amélie's iPad").contains("expression:"))
        // Native registration gets the native payload with its category.
        #expect(received("Newsroom test iPhone").contains(#""category":"NEWS_CATEGORY""#))
        // Notify users: only Alice's device gets the $UserId:{alice} event.
        #expect(received("Alice's iPhone").contains("alice:"))
        #expect(!received("Kenji's iPhone").contains("alice:"))
        // iOS 8 actionable invitation.
        #expect(received("Events iPhone").contains(#""category":"INVITE_CATEGORY""#))
        // The Live Activity gets the goal as an APNs liveactivity push, and nothing else.
        let activity = received("Live Activity of the final")
        #expect(activity.contains(#""event":"update","content-state":{"away":1,"home":2,"minute":89}"#), "\(activity)")
        #expect(activity.split(separator: "\n").count == 1)
        // A locale's fallbacks: no Canadian French, so French, named on the record; the Klingon
        // reader's alert would be empty, so it is not pushed and the science event says why.
        #expect(
            received("Marc's iPhone").contains(
                #""alert":"La sonde atteint la lune de Jupiter"}}  (no News_French_CA: fell back to news_french)"#))
        #expect(received("Worf's iPhone") == "      (nothing)\n")
        #expect(text.contains("(empty_alert 1)") && text.contains("Worf's iPhone (Klingon, never translated)\n      (nothing)"), "\(text)")
        // The Windows PC gets French toasts for World and Business.
        #expect(received("Ana's Windows PC").contains("<text>Le sommet se termine"))
        #expect(received("Ana's Windows PC").contains("business:") && !received("Ana's Windows PC").contains("science:"))
        // The browser gets its English template for World, Science and the expression.
        #expect(received("Noor's browser").contains(#""body":"Summit ends with climate accord""#))
        #expect(received("Noor's browser").contains("expression:") && !received("Noor's browser").contains("sports:"))
        // The sender pushed every delivery to the local APNs, FCM and Web Push servers: one receipt
        // each, all sent; the browser decrypted what the fan-out rendered for it.
        let pushed = text.split(separator: "\n").drop(while: { !$0.hasPrefix("5. ") }).prefix(while: { !$0.hasPrefix("6. ") })
        let receiptLines = pushed.filter { $0.hasPrefix("      ") && !$0.hasPrefix("      committed:") && !$0.hasPrefix("      sent:") }
        #expect(
            !receiptLines.isEmpty
                && receiptLines.allSatisfy { $0.contains(": sent (HTTP 200, 1 attempt") || $0.contains(": sent (HTTP 201, 1 attempt") },
            "\(pushed.joined(separator: "\n"))")
        let decrypted = pushed.filter { $0.contains("Noor's browser (English, Web Push) decrypted: ") }
        #expect(decrypted.count == 3, "\(pushed.joined(separator: "\n"))")
        #expect(decrypted.contains { $0.hasSuffix(#"{"title":"Breaking news","body":"Probe reaches Jupiter's moon"}"#) })
        // The World alert's reach: every delivery committed and sent, each after the first.
        #expect(pushed.contains { $0.hasPrefix("   The reach of bn-") && $0.contains("-world (") }, "\(pushed.joined(separator: "\n"))")
        for stage in ["committed", "sent:     "] {
            let line = pushed.first { $0.hasPrefix("      \(stage)") }.map(String.init) ?? ""
            #expect(
                line.contains("first ") && line.contains(" ms, half ") && line.contains("all ") && !line.contains("not reached"), "\(line)")
        }
        // The open funnel: Kenji and Wei opened it, Amélie dismissed it, each reported twice.
        #expect(
            pushed.contains { $0.contains("(each twice, counted once): delivered ") && $0.contains("-> opened 2, dismissed 1") },
            "\(pushed.joined(separator: "\n"))")
        let totals = try #require(pushed.last { $0.contains(" receipts for ") }, "\(pushed.joined(separator: "\n"))")
        let numbers = totals.split(separator: " ").compactMap { Int($0) }
        #expect(numbers.count == 2 && numbers[0] == numbers[1] && numbers[0] == receiptLines.count, "\(totals)")
        // Every event completed: the ten published at once, the scheduled one, the sports hub's
        // two, their two releases after Sal's quiet hours and the one sent after its test (the
        // correction's line says "completed, correcting").
        #expect(text.components(separatedBy: " completed: ").count - 1 == 16)
        // The scheduled story: accepted as scheduled, then released at its time and delivered
        // to the World devices.
        #expect(text.contains("-> 202 scheduled"), "\(text.suffix(600))")
        #expect(text.contains("completed: released ") && text.contains("ms after its time"), "\(text.suffix(600))")
        // The second app: its own hub, keys and devices, sent to through Azure's protocol.
        let sports = text.split(separator: "\n").drop(while: { !$0.hasPrefix("7. ") }).prefix(while: { !$0.hasPrefix("8. ") })
            .joined(separator: "\n")
        #expect(sports.contains("PUT /v1/hubs/sports -> 201"), "\(sports)")
        #expect(sports.contains("the sports listen key on the news app's routes -> 401"), "\(sports)")
        #expect(sports.contains("POST /sports/messages (Azure's protocol, tags Football) -> 201"), "\(sports)")
        #expect(sports.contains("completed: 2 deliveries in hub sports"), "\(sports)")
        for name in ["Sam's iPhone", "Sue's iPhone"] {
            #expect(sports.contains(#"\#(name) (hub sports): {"aps":{"alert":"Goal! 1-0 in the 89th minute"}}"#), "\(sports)")
        }
        // Its frequency cap (one alert an hour) holds the second alert back from both phones.
        #expect(sports.contains(#"("Full time: 1-0")  completed: 0 deliveries, skipped 3 (capped 2, held_quiet 1)"#), "\(sports)")
        // Sal's quiet hours hold both alerts; the first one's release is scheduled for when they end.
        #expect(sports.contains("held for quiet hours: 1 (Sal's iPhone); the scheduler releases it to Sal at "), "\(sports)")
        #expect(!sports.contains("Sal's iPhone (hub sports)"), "\(sports)")
        #expect(!sports.contains("Full time: 1-0\"}}"), "\(sports)")
        // When Sal's quiet hours end, both alerts are released to Sal, and the hub's cap lets one
        // of them through: whichever the scheduler releases first.
        let woken = text.split(separator: "\n").drop(while: { !$0.hasPrefix("11. ") }).prefix(while: { !$0.hasPrefix("Herald keeps") })
        let released = woken.filter { $0.hasPrefix("      Sal's iPhone (hub sports, released): ") }
        #expect(released.count == 1, "\(woken.joined(separator: "\n"))")
        #expect(
            woken.contains { $0.contains("#quiet-") && $0.contains("completed: 0 deliveries, skipped 1 (capped 1)") },
            "\(woken.joined(separator: "\n"))")
        #expect(woken.contains("   Sal wakes up to one alert: the hub's cap of one alert an hour held back the other."))
        // The test send: the newsroom's test iPhone and Alice's device only, under a test id; the
        // real send then takes the event's id.
        let tested = text.split(separator: "\n").drop(while: { !$0.hasPrefix("8. ") }).joined(separator: "\n")
        #expect(tested.contains("rehearsal (dryRun): ") && tested.contains("renditions previewed, nothing delivered"), "\(tested)")
        #expect(tested.contains("~test-") && tested.contains("completed, test: 2 deliveries"), "\(tested)")
        #expect(tested.contains("to Alice's iPhone (registered by the app backend) and Newsroom test iPhone (native payload)"), "\(tested)")
        #expect(tested.contains("deliveries: the test did not take the id"), "\(tested)")
        // The correction: the devices the alert reached, the wrong text replaced on their lock screens.
        let corrected = text.split(separator: "\n").drop(while: { !$0.hasPrefix("9. ") }).joined(separator: "\n")
        #expect(corrected.contains("before: Kenji's iPhone (English) shows Breaking: the summit reaches a deal"), "\(corrected)")
        #expect(corrected.contains("~correction-") && corrected.contains("completed, correcting bn-"), "\(corrected)")
        let reached = corrected.split(separator: "\n").first { $0.contains("completed, correcting") }.map(String.init) ?? ""
        let counts = reached.split(separator: " ").compactMap { Int($0) }
        #expect(counts.count == 2 && counts[0] == counts[1] && counts[0] > 0, "\(reached)")
        #expect(
            corrected.contains("after:  Kenji's iPhone (English) shows Correction: the summit ends without a deal  (replaced, not added)"),
            "\(corrected)")
        #expect(corrected.contains("after:  Léa's Android (French) shows") && corrected.contains("sans accord"), "\(corrected)")
        #expect(!corrected.contains("alerts)"), "\(corrected)")
        // Breaking news jumps the queue: published while the digest is being fanned out, done first.
        let jumped = text.split(separator: "\n").drop(while: { !$0.hasPrefix("10. ") }).joined(separator: "\n")
        #expect(jumped.contains("fans registered through the registrations log; a rehearsal counts 30000"), "\(jumped)")
        #expect(jumped.contains("(urgency breaking) -> 202"), "\(jumped)")
        #expect(jumped.contains("completed ") && jumped.contains(": 30000 deliveries, one per fan"), "\(jumped)")
        #expect(jumped.contains("The breaking alert overtook the digest"), "\(jumped)")
    }
}
