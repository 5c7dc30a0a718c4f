import Crypto
import Foundation

/// A local APNs server, a local FCM server, a local Web Push service and a local WNS server, their test CA, an APNs
/// key and a service account written to a scratch directory, a VAPID key, and the settings that
/// point a Herald sender at them: for the tests, the demo (`make run`) and the bench.
public final class LocalPushServices: Sendable {
    public let authority: LocalCertificateAuthority
    public let apnsKey: LocalAPNsKey
    public let account: LocalServiceAccount
    public let apns: LocalAPNsServer
    public let fcm: LocalFCMServer
    public let webPush: LocalWebPushServer
    public let wns: LocalWNSServer
    /// The VAPID key pair the sender signs with; browsers of `webPush` are subscribed with its public half.
    public let vapidKey: P256.Signing.PrivateKey
    /// The bundle id the APNs server accepts (`apns-topic`).
    public let topic: String
    public let directory: URL
    public let caFile: String
    public let keyFile: String
    public let serviceAccountFile: String

    private init(
        authority: LocalCertificateAuthority, apnsKey: LocalAPNsKey, account: LocalServiceAccount, apns: LocalAPNsServer,
        fcm: LocalFCMServer, webPush: LocalWebPushServer, wns: LocalWNSServer, vapidKey: P256.Signing.PrivateKey,
        topic: String, directory: URL, caFile: String, keyFile: String, serviceAccountFile: String
    ) {
        self.authority = authority
        self.apnsKey = apnsKey
        self.account = account
        self.apns = apns
        self.fcm = fcm
        self.webPush = webPush
        self.wns = wns
        self.vapidKey = vapidKey
        self.topic = topic
        self.directory = directory
        self.caFile = caFile
        self.keyFile = keyFile
        self.serviceAccountFile = serviceAccountFile
    }

    /// Starts the four servers on free loopback ports; `threads` event-loop threads each.
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
        let vapidKey = P256.Signing.PrivateKey()
        let webPush = try await LocalWebPushServer.start(
            authority: authority, applicationServerKey: Array(vapidKey.publicKey.x963Representation), threads: threads)
        let wns = try await LocalWNSServer.start(authority: authority, threads: threads)
        return LocalPushServices(
            authority: authority, apnsKey: apnsKey, account: account, apns: apns, fcm: fcm, webPush: webPush, wns: wns, vapidKey: vapidKey,
            topic: topic, directory: directory,
            caFile: try authority.writeCAFile(in: directory), keyFile: try apnsKey.write(in: directory),
            serviceAccountFile: try account.write(in: directory, tokenURI: fcm.tokenURI))
    }

    /// The VAPID private key as `HERALD_WEBPUSH_VAPID_KEY` takes it (the scalar, base64url).
    public var vapidPrivateKey: String { LocalWebPushServer.base64URL(Array(vapidKey.rawRepresentation)) }

    /// The contact the local VAPID tokens carry.
    public static let vapidSubject = "mailto:newsroom@herald.invalid"

    /// The sender's settings (`HERALD_APNS_*`, `HERALD_FCM_*`, `HERALD_WEBPUSH_*`, `HERALD_WNS_*`, `HERALD_PUSH_CA_FILE`) for these servers.
    public var environment: [String: String] {
        [
            "HERALD_APNS_KEY_FILE": keyFile, "HERALD_APNS_KEY_ID": apnsKey.keyId, "HERALD_APNS_TEAM_ID": apnsKey.teamId,
            "HERALD_APNS_TOPICS": topic, "HERALD_APNS_ENDPOINT": apns.baseURL,
            "HERALD_FCM_SERVICE_ACCOUNTS": serviceAccountFile, "HERALD_FCM_ENDPOINT": fcm.baseURL,
            "HERALD_WEBPUSH_VAPID_KEY": vapidPrivateKey, "HERALD_WEBPUSH_VAPID_SUBJECT": Self.vapidSubject,
            "HERALD_WNS_PACKAGE_SID": wns.packageSid, "HERALD_WNS_CLIENT_SECRET": wns.clientSecret, "HERALD_WNS_TOKEN_URL": wns.tokenURL,
            "HERALD_WNS_ENDPOINT": wns.baseURL,
            "HERALD_PUSH_CA_FILE": caFile,
        ]
    }

    public func shutdown() async {
        await apns.shutdown()
        await fcm.shutdown()
        await webPush.shutdown()
        await wns.shutdown()
        try? FileManager.default.removeItem(at: directory)
    }
}
