import Foundation
import HeraldDomain
@testable import HeraldPipeline
import HeraldPush
import Synchronization
import Testing

@Suite("a hub's own push clients: made from its credentials, remade when it changes, the deployment's otherwise")
struct HubPushGatewaysTests {
    static func delivery(_ platform: Platform, hub: HubName) -> DeliveryRecord {
        DeliveryRecord(
            eventId: "e1", registrationId: "r1", platform: platform, handle: "https://wns.example/channel", template: "news",
            payload: "<toast/>", headers: DeliveryHeaders(), expiresAt: nil, publishedAt: nil, renderedAt: Date(), hub: hub)
    }

    static func hub(_ version: Int64, _ credentials: HubCredentials) -> HubDefinition {
        HubDefinition(name: HubName("sports")!, policies: [], credentials: credentials, version: version)
    }

    @Test func clientsFollowTheHubsCredentials() async throws {
        let deploymentWNS = WNSClient(credentials: WNSCredentials(packageSid: "deployment-sid", clientSecret: "s"), options: .init())
        let deployment = PushGateway(apns: [], fcm: [], wns: deploymentWNS)
        let sports = HubName("sports")!
        let current = Mutex<HubDefinition?>(Self.hub(1, HubCredentials(wns: .init(packageSid: "sports-sid", clientSecret: "s1"))))
        let lookups = Atomic<Int>(0)
        let gateways = HubPushGateways(
            deployment: deployment,
            lookup: { name in
                lookups.add(1, ordering: .relaxed)
                return name == sports ? current.withLock { $0 } : nil
            }, logger: .init(label: "test"))
        func wnsSid(_ hub: HubName) async -> String? {
            (await gateways.choice(for: hub).transport(for: Self.delivery(.wns, hub: hub)) as? WNSClient)?.credentials.packageSid
        }

        // The default hub never asks; a hub unknown to the directory uses the deployment's.
        #expect(await wnsSid(.default) == "deployment-sid")
        #expect(lookups.load(ordering: .relaxed) == 0)
        #expect(await wnsSid(HubName("weather")!) == "deployment-sid")
        // The hub's own package, the same clients while the hub is unchanged.
        #expect(await wnsSid(sports) == "sports-sid")
        let first = await gateways.choice(for: sports).own?.gateway
        #expect(await gateways.choice(for: sports).own?.gateway === first)
        // A platform the hub has nothing for: the deployment's, and the reason when it has none either.
        let apns = Self.delivery(.apns, hub: sports)
        let choice = await gateways.choice(for: sports)
        #expect(choice.transport(for: apns) == nil)
        #expect(
            choice.missing(apns)
                == "no_credentials: hub sports has no apns credentials and this sender has no APNs credentials (HERALD_APNS_*)")

        // Changed: new clients.
        current.withLock { $0 = Self.hub(2, HubCredentials(wns: .init(packageSid: "sports-sid-2", clientSecret: "s2"))) }
        #expect(await wnsSid(sports) == "sports-sid-2")
        #expect(await gateways.choice(for: sports).own?.gateway !== first)

        // Credentials that cannot be used: that platform's deliveries get no client, and why.
        current.withLock {
            $0 = Self.hub(3, HubCredentials(webPush: .init(privateKey: "not-a-key", subject: "mailto:desk@example.com")))
        }
        let broken = await gateways.choice(for: sports)
        let browser = Self.delivery(.webpush, hub: sports)
        #expect(broken.transport(for: browser) == nil)
        #expect(
            broken.missing(browser).hasPrefix(
                "no_credentials: hub sports's webpush credentials cannot be used: hub sports: credentials.webPush.privateKey"),
            "\(broken.missing(browser))")
        #expect(await wnsSid(sports) == "deployment-sid", "WNS is not the hub's any more")

        // Removed: the deployment's again.
        current.withLock { $0 = Self.hub(4, HubCredentials()) }
        #expect(await gateways.choice(for: sports).own == nil)
        #expect(await wnsSid(sports) == "deployment-sid")
        await gateways.shutdown()
    }
}
