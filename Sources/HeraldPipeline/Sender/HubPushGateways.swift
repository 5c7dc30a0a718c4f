import Foundation
import HeraldDomain
import HeraldStreams
import HeraldPush
import Logging

/// Which push clients a hub's deliveries go through: for a platform the hub has credentials
/// for, clients made from them (when the hub's first delivery comes, and again when the hub
/// changes); for the others, and for the default hub, the deployment's.
actor HubPushGateways {
    /// What the sender knows of one hub's own clients.
    struct Own: Sendable {
        let version: Int64
        let credentials: HubCredentials
        /// Nil when the credentials could not be made into clients (`problem` says why).
        let gateway: PushGateway?
        let problem: String?
    }

    /// The clients one batch uses for one hub.
    struct Choice: Sendable {
        let own: Own?
        let deployment: PushGateway

        func transport(for delivery: DeliveryRecord) -> (any PushTransport)? {
            guard let own, own.credentials.covers(delivery.platform) else { return deployment.transport(for: delivery) }
            return own.gateway?.transport(for: delivery)
        }

        /// Why `delivery` has no client: the hub's credentials could not be used, or neither the
        /// hub nor the deployment has any for its platform.
        func missing(_ delivery: DeliveryRecord) -> String {
            if let own, own.credentials.covers(delivery.platform), let problem = own.problem {
                return "no_credentials: hub \(delivery.hub)'s \(delivery.platform.rawValue) credentials cannot be used: \(problem)"
            }
            let settings =
                switch delivery.platform {
                case .apns: "APNs credentials (HERALD_APNS_*)"
                case .fcm: "FCM service account (HERALD_FCM_*)"
                case .webpush: "VAPID key (HERALD_WEBPUSH_VAPID_*)"
                case .wns: "WNS package (HERALD_WNS_*)"
                }
            if delivery.hub.isDefault { return "no_credentials: this sender has no \(settings)" }
            return "no_credentials: hub \(delivery.hub) has no \(delivery.platform.rawValue) credentials and this sender has no \(settings)"
        }
    }

    /// A hub's definition as this process knows it now (the `herald.hubs` follower's).
    typealias Lookup = @Sendable (HubName) async throws -> HubDefinition?

    let deployment: PushGateway
    /// Nil: every hub uses the deployment's clients.
    let lookup: Lookup?
    let logger: Logger
    private var own: [HubName: Own] = [:]
    private var retired: [PushGateway] = []

    init(deployment: PushGateway, lookup: Lookup?, logger: Logger) {
        self.deployment = deployment
        self.lookup = lookup
        self.logger = logger
    }

    init(deployment: PushGateway, hubs: HubDirectory, logger: Logger) {
        self.init(deployment: deployment, lookup: { try await hubs.hub($0) }, logger: logger)
    }

    /// The clients for `hub`'s deliveries now.
    func choice(for hub: HubName) async -> Choice {
        guard !hub.isDefault, let lookup else { return Choice(own: nil, deployment: deployment) }
        let definition: HubDefinition?
        do {
            definition = try await lookup(hub)
        } catch {
            // The hubs topic cannot be read: what was known of the hub still holds.
            return Choice(own: own[hub], deployment: deployment)
        }
        guard let definition, !definition.credentials.isEmpty else {
            if let gone = own.removeValue(forKey: hub) { retire(gone) }
            return Choice(own: nil, deployment: deployment)
        }
        if let known = own[hub], known.version == definition.version { return Choice(own: known, deployment: deployment) }
        let made = await make(definition)
        // Another batch may have made them meanwhile (an actor re-enters at `await`).
        if let known = own[hub], known.version >= made.version {
            retire(made)
            return Choice(own: known, deployment: deployment)
        }
        if let replaced = own.updateValue(made, forKey: hub) { retire(replaced) }
        return Choice(own: made, deployment: deployment)
    }

    private func make(_ definition: HubDefinition) async -> Own {
        do {
            let credentials = try HubPushCredentials(definition.credentials, hub: definition.name)
            let gateway = try await deployment.hubGateway(credentials)
            logger.info(
                "hub push clients made",
                metadata: [
                    "hub": "\(definition.name)", "version": "\(definition.version)",
                    "platforms": "\(Platform.allCases.filter(definition.credentials.covers).map(\.rawValue).joined(separator: ","))",
                ])
            return Own(version: definition.version, credentials: definition.credentials, gateway: gateway, problem: nil)
        } catch {
            logger.error("hub push credentials cannot be used", metadata: ["hub": "\(definition.name)", "error": "\(error)"])
            return Own(version: definition.version, credentials: definition.credentials, gateway: nil, problem: "\(error)")
        }
    }

    /// Clients replaced or no longer needed: requests of batches still in hand may be on them,
    /// so they are shut down once a request could no longer be waiting for an answer.
    private func retire(_ replaced: Own) {
        guard let gateway = replaced.gateway else { return }
        retired.append(gateway)
        let grace = Duration.seconds(Int64(2 * gateway.options.requestTimeout) + 1)
        Task {
            try? await Task.sleep(for: grace)
            await self.shutDownRetired(gateway)
        }
    }

    private func shutDownRetired(_ gateway: PushGateway) async {
        guard let index = retired.firstIndex(where: { $0 === gateway }) else { return }
        retired.remove(at: index)
        await gateway.shutdown()
    }

    /// Requests in flight on every client.
    var inFlight: Int {
        own.values.reduce(deployment.inFlight) { $0 + ($1.gateway?.inFlight ?? 0) } + retired.reduce(0) { $0 + $1.inFlight }
    }

    /// Shuts every client down, the deployment's included.
    func shutdown() async {
        for entry in own.values { await entry.gateway?.shutdown() }
        for gateway in retired { await gateway.shutdown() }
        own = [:]
        retired = []
        await deployment.shutdown()
    }
}
