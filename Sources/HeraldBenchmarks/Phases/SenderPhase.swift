import Foundation
import Crypto
import HeraldDomain
import HeraldKafka
import HeraldPipeline
import HeraldPush
import HeraldStreams
import HeraldLocalPush
import Logging

/// A sender row: one `herald worker --roles sender` process pushes `count` deliveries to the
/// local APNs server, or to the local Web Push service (each message encrypted for one of
/// ``browsers`` browsers, which the service decrypts), over HTTP/2 and TLS on loopback with one
/// event-loop thread, beside that same server's ceiling measured in the same run by an
/// independent HTTP/2 load generator (`h2load` from Debian's nghttp2-client) with the same
/// connections and streams (for Web Push: one pre-encrypted message, which the service decrypts
/// each time as it does the sender's).
///
/// The deliveries are written to the phase's `herald.deliveries` after the sender has pushed
/// one warm-up delivery (its group joined, its connections open), so the rate is the
/// steady pushing: requests the server answered, from the first measured one to the last.
struct SenderPhase {
    /// `.apns` or `.webpush`.
    let platform: Platform
    let count: Int
    let names: BenchmarkNames
    let configuration: PipelineConfiguration
    let options: BenchmarkOptions
    let environment: BenchmarkEnvironment

    static let connections = 2
    static let streams = 100
    static let payload = #"{"aps":{"alert":"Breaking news: the summit ends with a climate agreement"}}"#
    static let webPushPayload = #"{"title":"Breaking news","body":"the summit ends with a climate agreement"}"#
    static let browsers = 1_000

    var serviceName: String { platform == .webpush ? "the local Web Push service" : "a local APNs server" }

    private var logger: Logger { environment.logger }

    func run() async throws -> BenchmarkReport.Sender {
        Console.say("== sender: \(Console.count(count)) deliveries to \(serviceName), topics \(names.topicPrefix)*")
        let push = try await LocalPushServices.start(threads: 1)
        push.apns.recordRequests = false
        push.webPush.recordRequests = false
        let handles = platform == .webpush ? (0..<Self.browsers).map { _ in push.webPush.subscribe().handle } : []
        let platform = platform
        let requests = { platform == .webpush ? push.webPush.requestCount : push.apns.requestCount }
        var worker: WorkerProcess?
        var producer: KafkaProducer?
        func cleanUp() async {
            await worker?.stop()
            await producer?.shutdown(flushTimeout: .seconds(5))
            await push.shutdown()
            await removeData()
        }
        do {
            try await TopicProvisioner(
                topics: configuration.topics, bootstrapServers: configuration.bootstrapServers, extra: configuration.kafkaExtra,
                logger: logger
            ).provision()
            let (ceiling, command) =
                try await (platform == .webpush ? measureWebPushCeiling(push) : Self.measureCeiling(push, requests: count))
            if let ceiling {
                Console.say("  h2load against the same server: \(Console.fixed(ceiling, 0)) requests/s")
            } else {
                Console.say("  h2load not found (apt-get install nghttp2-client): no ceiling")
            }

            var settings = push.environment
            settings["HERALD_PUSH_CONNECTIONS"] = String(Self.connections)
            settings["HERALD_PUSH_STREAMS"] = String(Self.streams)
            let spec = WorkerSpec(names: names, index: 0, roles: "sender", environment: settings)
            let sender = try WorkerProcess(launch: environment.workerLaunch(spec), spec: spec, logDirectory: environment.workDirectory)
            worker = sender
            let records = try KafkaProducer(
                configuration: configuration.deliveryProducerConfiguration(
                    clientId: "herald-bench-deliveries", transactionalId: nil, onePartitionPerTask: false),
                logger: logger)
            producer = records
            let eventId = "\(names.redisPrefix)-push"
            // Warm-up: the sender joins its group and opens its connections.
            try enqueue(records, eventId: eventId + "-warmup", range: 0..<1, handles: handles)
            try await records.flush()
            let warmDeadline = Date().addingTimeInterval(Double(options.eventTimeoutSeconds))
            while requests() < 1 {
                guard sender.isRunning else { throw exited(sender) }
                guard Date() < warmDeadline else { throw BenchmarkError("the sender pushed nothing", code: "sender_idle") }
                try await Task.sleep(for: .milliseconds(20))
            }
            try await Task.sleep(for: .seconds(1))
            let baselineRSS = sender.rssBytes ?? 0
            let cpuBefore = sender.cpuSeconds ?? 0
            let before = requests()

            try enqueue(records, eventId: eventId, range: 0..<count, handles: handles)
            try await records.flush(timeout: .seconds(120))
            var first: ContinuousClock.Instant?
            var last = ContinuousClock.now
            let deadline = Date().addingTimeInterval(Double(options.eventTimeoutSeconds))
            while requests() - before < count {
                guard sender.isRunning else { throw exited(sender) }
                guard Date() < deadline else {
                    throw BenchmarkError(
                        "the sender pushed \(requests() - before) of \(count) within \(options.eventTimeoutSeconds) s",
                        code: "sender_slow")
                }
                if first == nil && requests() > before { first = .now }
                try await Task.sleep(for: .milliseconds(5))
                last = .now
            }
            let seconds = (last - (first ?? last)).seconds
            let cpu = (sender.cpuSeconds ?? 0) - cpuBefore
            let peakRSS = sender.peakRSSBytes ?? 0
            let (receipts, sent) = try await countReceipts(eventId: eventId)
            let result = BenchmarkReport.Sender(
                deliveries: count, ceilingPerSecond: ceiling, ceilingCommand: command,
                sendsPerSecond: seconds > 0 ? Double(count - 1) / seconds : 0, sendSeconds: seconds, receipts: receipts, sent: sent,
                extraRequests: max(0, requests() - before - count), baselineRSSBytes: baselineRSS, peakRSSBytes: peakRSS,
                cpuSeconds: cpu, connections: Self.connections, streams: Self.streams, platform: platform.rawValue,
                encryption: platform == .webpush ? try await Self.encryptionCost(handle: handles[0]) : nil)
            if let encryption = result.encryption {
                Console.say(
                    "  encryption per message, one core: Herald \(Console.fixed(encryption.heraldMicroseconds, 1)) us, pywebpush \(encryption.pywebpushMicroseconds.map { Console.fixed($0, 1) + " us" } ?? "not measured (\(encryption.pywebpushCommand))")"
                )
            }
            Console.say(
                "  pushed \(Console.count(count)) in \(Console.fixed(seconds, 2)) s: \(Console.fixed(result.sendsPerSecond, 0))/s\(ceiling.map { ", \(Console.fixed(result.sendsPerSecond / $0, 2)) of the ceiling" } ?? ""); \(Console.count(receipts)) receipts (\(Console.count(sent)) sent); RSS \(Console.fixed(Double(baselineRSS) / 1_048_576, 0)) -> \(Console.fixed(Double(peakRSS) / 1_048_576, 0)) MB"
            )
            await cleanUp()
            return result
        } catch {
            if let worker, !worker.isRunning {
                Console.say("sender exited; last log lines (\(worker.logFile.path)):\n\(worker.logTail())")
            }
            await cleanUp()
            throw error
        }
    }

    private func exited(_ worker: WorkerProcess) -> BenchmarkError {
        BenchmarkError("the sender worker exited; its log: \(worker.logFile.path)", code: "worker_exited")
    }

    private func enqueue(_ producer: KafkaProducer, eventId: String, range: Range<Int>, handles: [String]) throws {
        let now = Date()
        for index in range {
            let record =
                platform == .webpush
                ? DeliveryRecord(
                    eventId: eventId, registrationId: "r\(index)", platform: .webpush, handle: handles[index % handles.count],
                    template: "news", payload: Self.webPushPayload, headers: ["Urgency": "high", "TTL": "3600"], expiresAt: nil,
                    publishedAt: now, renderedAt: now)
                : DeliveryRecord(
                    eventId: eventId, registrationId: "r\(index)", platform: .apns,
                    handle: String(repeating: String(format: "%08x", index), count: 8), template: "news", payload: Self.payload,
                    headers: ["apns-push-type": "alert", "apns-priority": "10"], expiresAt: nil, publishedAt: now, renderedAt: now)
            try producer.enqueue(
                KafkaOutgoingMessage(
                    topic: configuration.topics.deliveries, key: Array(record.registrationId.utf8), value: record.encoded()))
        }
    }

    /// h2load with the sender's connections and streams, the same payload and headers, and a
    /// valid provider token: `requests` to the local APNs server; nil when h2load is not installed.
    static func measureCeiling(_ push: LocalPushServices, requests: Int) async throws -> (Double?, String?) {
        guard let h2load = H2Load.executable else { return (nil, nil) }
        let credentials = try APNsCredentials.load(
            keyFile: push.keyFile, keyId: push.apnsKey.keyId, teamId: push.apnsKey.teamId, topics: [push.topic],
            endpoint: push.apns.baseURL)
        let token = try await APNsProviderToken(credentials: credentials).token()
        let body = push.directory.appendingPathComponent("payload.json")
        try Data(Self.payload.utf8).write(to: body)
        let rate = try H2Load.rate(
            h2load, url: push.apns.baseURL + "/3/device/" + String(repeating: "ab", count: 32),
            headers: ["authorization: bearer \(token)", "apns-topic: \(push.topic)", "apns-push-type: alert", "apns-priority: 10"],
            body: body, requests: requests, connections: connections, streams: streams
        ) { push.apns.answered(status: 200) }
        return (
            rate,
            H2Load.command(requests: requests, connections: connections, streams: streams) + " (APNs headers, provider token, same payload)"
        )
    }

    /// h2load against the local FCM server: `requests` HTTP v1 sends of one message with an
    /// access token the server issued; nil when h2load is not installed.
    static func measureFCMCeiling(_ push: LocalPushServices, requests: Int) async throws -> (Double?, String?) {
        guard let h2load = H2Load.executable else { return (nil, nil) }
        let project = push.account.projectId
        let body = push.directory.appendingPathComponent("fcm.json")
        let message =
            #"{"message":{"token":"bench-ceiling:APA91b","notification":{"title":"Breaking news","body":"the summit ends with a climate agreement"}}}"#
        try Data(message.utf8).write(to: body)
        let rate = try H2Load.rate(
            h2load, url: push.fcm.baseURL + "/v1/projects/\(project)/messages:send",
            headers: ["authorization: Bearer \(push.fcm.issueAccessToken(project: project))", "content-type: application/json"],
            body: body, requests: requests, connections: connections, streams: streams
        ) { push.fcm.answered(status: 200) }
        return (
            rate,
            H2Load.command(requests: requests, connections: connections, streams: streams) + " (FCM HTTP v1, access token, one message)"
        )
    }

    /// h2load against the local Web Push service: one message encrypted for one browser, posted
    /// again and again with a valid VAPID token; the service checks the token and decrypts each.
    private func measureWebPushCeiling(_ push: LocalPushServices) async throws -> (Double?, String?) {
        guard let h2load = H2Load.executable else { return (nil, nil) }
        let browser = push.webPush.subscribe()
        let subscription = try WebPushSubscription.parse(handle: browser.handle).get()
        let body = push.directory.appendingPathComponent("webpush.bin")
        try Data(try WebPushEncryption.encrypt(Array(Self.webPushPayload.utf8), for: subscription)).write(to: body)
        let credentials = try VAPIDCredentials.make(
            privateKey: push.vapidPrivateKey, subject: LocalPushServices.vapidSubject, source: "bench")
        let authorization = try await VAPIDTokens(credentials: credentials).authorization(origin: push.webPush.origin)
        let rate = try H2Load.rate(
            h2load, url: browser.endpoint,
            headers: [
                "authorization: \(authorization)", "content-encoding: aes128gcm", "ttl: 3600", "urgency: high",
                "content-type: application/octet-stream",
            ], body: body, requests: count, connections: Self.connections, streams: Self.streams
        ) { push.webPush.answered(status: 201) }
        return (
            rate,
            H2Load.command(requests: count, connections: Self.connections, streams: Self.streams)
                + " (one message encrypted once, VAPID token, decrypted by the service each time)"
        )
    }

    /// What encrypting one message costs on one core: Herald's RFC 8291 encryption in this
    /// process, and pywebpush's (PyPI; the library most web push senders use) in its own, each
    /// for the same payload and browser key with a fresh server key and salt per message.
    static func encryptionCost(handle: String) async throws -> BenchmarkReport.Sender.Encryption {
        let subscription = try WebPushSubscription.parse(handle: handle).get()
        let payload = Array(webPushPayload.utf8)
        let messages = 20_000
        _ = try WebPushEncryption.encrypt(payload, for: subscription)
        let started = ContinuousClock.now
        for _ in 0..<messages { _ = try WebPushEncryption.encrypt(payload, for: subscription) }
        let herald = (ContinuousClock.now - started).seconds / Double(messages) * 1e6
        let command = "pywebpush WebPusher.encode (aes128gcm), 2,000 messages, process CPU time"
        guard let python = PyWebPush.python() else {
            return .init(heraldMicroseconds: herald, pywebpushMicroseconds: nil, pywebpushCommand: "pywebpush could not be installed")
        }
        let script = """
            import sys, time
            from pywebpush import WebPusher
            pusher = WebPusher({"endpoint": sys.argv[1], "keys": {"p256dh": sys.argv[2], "auth": sys.argv[3]}})
            data = sys.argv[4].encode()
            pusher.encode(data, content_encoding="aes128gcm")
            start = time.process_time()
            for _ in range(2000):
                pusher.encode(data, content_encoding="aes128gcm")
            print("%.3f" % ((time.process_time() - start) / 2000 * 1e6))
            """
        let output = Process.output(
            python,
            [
                "-c", script, subscription.endpoint, Base64URL.encode(subscription.p256dh), Base64URL.encode(subscription.auth),
                webPushPayload,
            ])
        let measured = output.flatMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        return .init(heraldMicroseconds: herald, pywebpushMicroseconds: measured, pywebpushCommand: command)
    }

    /// Receipts of the measured deliveries on `herald.receipts` (`read_committed`), and how many say sent.
    private func countReceipts(eventId: String) async throws -> (Int, Int) {
        var tail = RecordTail(topic: configuration.topics.receipts, bootstrapServers: configuration.bootstrapServers)
        tail.extra = configuration.kafkaExtra
        tail.eventId = eventId
        var seen = Set<String>()
        var sent = 0
        let deadline = Date().addingTimeInterval(60)
        repeat {
            seen.removeAll(keepingCapacity: true)
            sent = 0
            for try await message in tail.records(logger: logger) {
                guard let key = message.key, let value = message.value else { continue }
                if seen.insert(String(decoding: key, as: UTF8.self)).inserted,
                    String(decoding: value, as: UTF8.self).contains(#""outcome":"sent""#)
                {
                    sent += 1
                }
            }
            if seen.count >= count { break }
            try await Task.sleep(for: .seconds(1))
        } while Date() < deadline
        return (seen.count, sent)
    }

    private func removeData() async {
        await PhaseData.remove(names: names, configuration: configuration, options: options, logger: logger)
    }
}

/// pywebpush from PyPI in a virtual environment of its own (`.herald/pywebpush`), installed on
/// the bench's first use: the Web Push row's comparison.
enum PyWebPush {
    static let version = "2.5.0"

    /// The environment's python, installing it first when needed; nil when that fails.
    static func python() -> String? {
        let directory = FileManager.default.currentDirectoryPath + "/.herald/pywebpush"
        let python = directory + "/bin/python"
        let marker = directory + "/.installed-\(version)"
        if FileManager.default.fileExists(atPath: marker) { return python }
        Console.say("  installing pywebpush \(version) from PyPI into .herald/pywebpush (once)")
        guard succeeds("/usr/bin/env", ["python3", "-m", "venv", directory]),
            succeeds(directory + "/bin/pip", ["install", "-q", "--disable-pip-version-check", "pywebpush==\(version)"]),
            FileManager.default.createFile(atPath: marker, contents: Data())
        else { return nil }
        return python
    }

    static func succeeds(_ executable: String, _ arguments: [String]) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }
}
