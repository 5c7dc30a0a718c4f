import HeraldAPI
import HeraldDomain
import Synchronization

/// Registration counts a test sets, and how often each was read.
final class FixedRegistrationCounts: RegistrationCounting, Sendable {
    private let state = Mutex<(hub: [HubName: Int], handle: [String: Int], reads: Int)>(([:], [:], 0))

    func set(hub: HubName, _ count: Int) { state.withLock { $0.hub[hub] = count } }
    func set(handle: String, _ count: Int) { state.withLock { $0.handle[handle] = count } }
    var reads: Int { state.withLock { $0.reads } }

    func registrations(hub: HubName) async throws -> Int {
        state.withLock {
            $0.reads += 1
            return $0.hub[hub] ?? 0
        }
    }

    func registrations(hub: HubName, handle: String) async throws -> Int {
        state.withLock {
            $0.reads += 1
            return $0.handle[handle] ?? 0
        }
    }
}
