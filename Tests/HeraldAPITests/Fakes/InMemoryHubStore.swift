import HeraldAPI
import HeraldDomain
import Synchronization

/// Hubs kept in memory, as the directory would after its writes.
final class InMemoryHubStore: HubStore, Sendable {
    let hubs = Mutex<[HubName: HubDefinition]>([:])

    init(_ initial: [HubDefinition] = []) {
        hubs.withLock { hubs in for hub in initial { hubs[hub.name] = hub } }
    }

    func hub(_ name: HubName) async throws -> HubDefinition? { hubs.withLock { $0[name] } }
    func allHubs() async -> [HubDefinition] { hubs.withLock { $0.values.sorted { $0.name < $1.name } } }
    func put(_ hub: HubDefinition) async throws { hubs.withLock { $0[hub.name] = hub } }
    func delete(_ name: HubName) async throws { hubs.withLock { _ = $0.removeValue(forKey: name) } }
}

/// Counts sends per hub, without minutes: enough to see the limit refuse the excess.
final class CountingSendQuota: SendQuota, Sendable {
    let counts = Mutex<[HubName: Int]>([:])

    func admit(hub: HubName, perMinute: Int) async throws -> Bool {
        counts.withLock { counts in
            counts[hub, default: 0] += 1
            return counts[hub]! <= perMinute
        }
    }
}
