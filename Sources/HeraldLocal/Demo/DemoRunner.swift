import HeraldApp
import Foundation
import HeraldAPI
import HeraldRedis
import HeraldLocalPush
import Logging
import Prometheus

/// `herald-local demo`: one process with the API, every worker role and the story of the seed
/// tutorials (see `DemoStory`). Access keys are generated for the run unless configured. The
/// sender role pushes to local APNs, FCM, Web Push and WNS servers started for the run (HTTP/2 over TLS with their own test CA, the services' real protocols).
public struct DemoRunner: Sendable {
    public let settings: HeraldSettings
    public let registry: PrometheusCollectorRegistry
    public let keepRunning: Bool
    /// Where the process logs, which the story names; nil when the log goes to the console.
    public let logFile: String?

    public init(settings: HeraldSettings, registry: PrometheusCollectorRegistry, keepRunning: Bool, logFile: String? = nil) {
        self.settings = settings
        self.registry = registry
        self.keepRunning = keepRunning
        self.logFile = logFile
    }

    public func run() async throws {
        let logger = Logger(label: "herald.demo")
        let listen = (name: "DefaultListenSharedAccessSignature", key: Self.randomKey())
        let send = (name: "NewsroomSend", key: Self.randomKey())
        // The namespace's operator: creates the second app's hub.
        let manage = (name: "Operator", key: Self.randomKey())
        let userKey = settings[.userTokenKey].isEmpty ? Self.randomKey() : settings[.userTokenKey]
        let port = try settings.apiPort()
        let hubURI = "http://127.0.0.1:\(port)/"
        let push = try await LocalPushServices.start(topic: "com.example.herald.news", projectId: "herald-demo")
        // The lock screens of chapter 9 are read from what the servers accepted.
        push.apns.recordRequests = true
        push.fcm.recordRequests = true
        var roles = settings.list(.roles)
        if !roles.contains("sender") { roles.append("sender") }
        var pushSettings: [Setting.Key: String] = [.roles: roles.joined(separator: ",")]
        for setting in Setting.all {
            if let value = push.environment[setting.environment] { pushSettings[setting.key] = value }
        }
        let demoSettings = settings.overriding(pushSettings).overriding([
            .apiHost: "127.0.0.1",
            .hubUri: hubURI,
            .policies: "\(listen.name):listen:\(listen.key);\(send.name):send:\(send.key);\(manage.name):manage:\(manage.key)"
                + (settings[.policies].isEmpty ? "" : ";" + settings[.policies]),
            .userTokenKey: userKey,
            .metricsPort: "0",
        ])

        let pool = RedisConnectionPool(configuration: try demoSettings.redisConfiguration(), size: try demoSettings.redisPoolSize())
        defer { pool.shutdown() }
        let api = try await APIRunner(settings: demoSettings, registry: registry).makeService(pool: pool, logger: logger)
        let story = DemoStory(
            client: HeraldHTTPClient(baseURL: URL(string: hubURI)!),
            hubURI: hubURI, listen: listen, send: send, manage: manage, userTokenKey: userKey,
            bootstrapServers: demoSettings[.kafkaBrokers], kafkaProperties: try demoSettings.kafkaProperties(),
            topics: try demoSettings.topics,
            keepRunning: keepRunning, logFile: logFile, logger: logger,
            browserSubscription: push.webPush.subscribe().json, windowsChannel: push.wns.openChannel(),
            browserInbox: { [webPush = push.webPush] in
                webPush.requests().compactMap { $0.plaintext.map { String(decoding: $0, as: UTF8.self) } }
            },
            recordPushes: { [apns = push.apns, fcm = push.fcm] on in
                apns.recordRequests = on
                fcm.recordRequests = on
            },
            registrationsTopic: try demoSettings.registryConfiguration().registrationsTopic,
            lockScreen: { [apns = push.apns, fcm = push.fcm] platform, handle in
                platform == "fcm" ? LockScreen.fcm(fcm.requests(), token: handle) : LockScreen.apns(apns.requests(), token: handle)
            }
        )
        do {
            try await WorkerRunner(settings: demoSettings, registry: registry).run(extraServices: [api, story], pool: pool)
        } catch {
            await push.shutdown()
            throw error
        }
        await push.shutdown()
    }

    static func randomKey() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return Data(bytes).base64EncodedString()
    }
}
