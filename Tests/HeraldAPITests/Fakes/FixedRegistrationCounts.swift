import HeraldAPI
import HeraldDomain
import Synchronization

/// Registration counts a test sets, and how often each was read.
final class FixedRegistrationCounts: RegistrationCounting, Sendable {
    private let state = Mutex<(hub: [HubName: Int], handle: [String: Int], reads: Int, templates: [HubName: Set<String>])>(
        ([:], [:], 0, [:]))

    func set(hub: HubName, _ count: Int) { state.withLock { $0.hub[hub] = count } }
    func set(handle: String, _ count: Int) { state.withLock { $0.handle[handle] = count } }
    var reads: Int { state.withLock { $0.reads } }

    func registrations(hub: HubName) async throws -> Int {
        state.withLock {
            $0.reads += 1
            return $0.hub[hub] ?? 0
        }
    }

    /// Templates told apart by name and body, as the index tells them apart by content.
    func admitTemplates(of written: [Registration], hub: HubName, limit: Int) async throws -> (admitted: Bool, held: Int) {
        let keys = Set(written.compactMap { $0.template.map { "\($0.name)\u{0}\($0.body)" } })
        return state.withLock {
            let had = $0.templates[hub, default: []]
            guard had.union(keys).count <= limit else { return (false, had.count) }
            $0.templates[hub] = had.union(keys)
            return (true, had.count)
        }
    }

    func registrations(hub: HubName, handle: String) async throws -> Int {
        state.withLock {
            $0.reads += 1
            return $0.handle[handle] ?? 0
        }
    }
}
