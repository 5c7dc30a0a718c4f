import Foundation
import HeraldDomain

/// The sender's clients, one per provider, and which one a delivery goes to.
///
/// APNs: the team whose topics include the delivery's `apns-topic` header, else the first
/// team. FCM: the project named by the delivery's `fcm-project` header (a registration
/// header template), else the first project. Web Push: the one VAPID identity, for every
/// browser's push service. WNS: the one Windows package.
public final class PushGateway: Sendable {
    public let apns: [APNsClient]
    public let fcm: [FCMClient]
    public let webPush: WebPushClient?
    public let wns: WNSClient?
    /// The connection settings and FCM endpoint the clients were made with: a hub's own
    /// clients are made with the same.
    public let options: PushConnectionOptions
    public let fcmEndpoint: URL

    public init(
        apns: [APNsClient], fcm: [FCMClient], webPush: WebPushClient? = nil, wns: WNSClient? = nil,
        options: PushConnectionOptions = PushConnectionOptions(), fcmEndpoint: URL = FCMClient.production
    ) {
        self.apns = apns
        self.fcm = fcm
        self.webPush = webPush
        self.wns = wns
        self.options = options
        self.fcmEndpoint = fcmEndpoint
    }

    /// Clients for the given providers, each with its own connections.
    public static func make(
        apns: [APNsCredentials], fcm: [FCMServiceAccount], fcmEndpoint: URL = FCMClient.production, vapid: VAPIDCredentials? = nil,
        wns: WNSCredentials? = nil, options: PushConnectionOptions
    ) async throws -> PushGateway {
        var apnsClients: [APNsClient] = []
        for credentials in apns { apnsClients.append(try await APNsClient(credentials: credentials, options: options)) }
        var fcmClients: [FCMClient] = []
        for account in fcm { fcmClients.append(try await FCMClient(account: account, endpoint: fcmEndpoint, options: options)) }
        let webPush: WebPushClient? = if let vapid { try await WebPushClient(credentials: vapid, options: options) } else { nil }
        return PushGateway(
            apns: apnsClients, fcm: fcmClients, webPush: webPush, wns: wns.map { WNSClient(credentials: $0, options: options) },
            options: options, fcmEndpoint: fcmEndpoint)
    }

    /// Clients for one hub's own credentials, with this gateway's connection settings.
    public func hubGateway(_ credentials: HubPushCredentials) async throws -> PushGateway {
        try await Self.make(
            apns: credentials.apns.map { [$0] } ?? [], fcm: credentials.fcm.map { [$0] } ?? [], fcmEndpoint: fcmEndpoint,
            vapid: credentials.vapid, wns: credentials.wns, options: options)
    }

    /// The client for `delivery`, or nil when Herald has no sender for its platform here.
    public func transport(for delivery: DeliveryRecord) -> (any PushTransport)? {
        switch delivery.platform {
        case .apns:
            if let named = delivery.headers["apns-topic"],
                case let topic = named.hasSuffix(APNsClient.liveActivityTopicSuffix)
                    ? String(named.dropLast(APNsClient.liveActivityTopicSuffix.count)) : named,
                let team = apns.first(where: { $0.credentials.topics.contains(topic) })
            {
                return team
            }
            return apns.first
        case .fcm:
            if let project = delivery.headers["fcm-project"], let client = fcm.first(where: { $0.account.projectId == project }) {
                return client
            }
            return fcm.first
        case .webpush:
            return webPush
        case .wns:
            return wns
        }
    }

    public var inFlight: Int {
        apns.reduce(0) { $0 + $1.inFlight } + fcm.reduce(0) { $0 + $1.inFlight } + (webPush?.inFlight ?? 0) + (wns?.inFlight ?? 0)
    }

    public func shutdown() async {
        for client in apns { await client.shutdown() }
        for client in fcm { await client.shutdown() }
        await webPush?.shutdown()
        await wns?.shutdown()
    }
}
