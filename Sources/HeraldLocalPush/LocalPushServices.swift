import Foundation

/// A local APNs server and a local FCM server, their test CA, an APNs key and a service
/// account written to a scratch directory, and the settings that point a Herald sender at
/// them: for the tests, the demo (`make run`) and the bench.
public final class LocalPushServices: Sendable {
    public let authority: LocalCertificateAuthority
    public let apnsKey: LocalAPNsKey
    public let account: LocalServiceAccount
    public let apns: LocalAPNsServer
    public let fcm: LocalFCMServer
    /// The bundle id the APNs server accepts (`apns-topic`).
    public let topic: String
    public let directory: URL
    public let caFile: String
    public let keyFile: String
    public let serviceAccountFile: String

    private init(
        authority: LocalCertificateAuthority, apnsKey: LocalAPNsKey, account: LocalServiceAccount, apns: LocalAPNsServer,
        fcm: LocalFCMServer,
        topic: String, directory: URL, caFile: String, keyFile: String, serviceAccountFile: String
    ) {
        self.authority = authority
        self.apnsKey = apnsKey
        self.account = account
        self.apns = apns
        self.fcm = fcm
        self.topic = topic
        self.directory = directory
        self.caFile = caFile
        self.keyFile = keyFile
        self.serviceAccountFile = serviceAccountFile
    }

    /// Starts both servers on free loopback ports; `threads` event-loop threads each.
    public static func start(topic: String = "com.example.herald", projectId: String = "herald-test", threads: Int = 1) async throws
        -> LocalPushServices
    {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-push-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let authority = try LocalCertificateAuthority()
        let apnsKey = LocalAPNsKey()
        let account = try LocalServiceAccount(projectId: projectId)
        let apns = try await LocalAPNsServer.start(authority: authority, key: apnsKey, topics: [topic], threads: threads)
        let fcm = try await LocalFCMServer.start(authority: authority, account: account, threads: threads)
        return LocalPushServices(
            authority: authority, apnsKey: apnsKey, account: account, apns: apns, fcm: fcm, topic: topic, directory: directory,
            caFile: try authority.writeCAFile(in: directory), keyFile: try apnsKey.write(in: directory),
            serviceAccountFile: try account.write(in: directory, tokenURI: fcm.tokenURI))
    }

    /// The sender's settings (`HERALD_APNS_*`, `HERALD_FCM_*`, `HERALD_PUSH_CA_FILE`) for these servers.
    public var environment: [String: String] {
        [
            "HERALD_APNS_KEY_FILE": keyFile, "HERALD_APNS_KEY_ID": apnsKey.keyId, "HERALD_APNS_TEAM_ID": apnsKey.teamId,
            "HERALD_APNS_TOPICS": topic, "HERALD_APNS_ENDPOINT": apns.baseURL,
            "HERALD_FCM_SERVICE_ACCOUNTS": serviceAccountFile, "HERALD_FCM_ENDPOINT": fcm.baseURL,
            "HERALD_PUSH_CA_FILE": caFile,
        ]
    }

    public func shutdown() async {
        await apns.shutdown()
        await fcm.shutdown()
        try? FileManager.default.removeItem(at: directory)
    }
}
