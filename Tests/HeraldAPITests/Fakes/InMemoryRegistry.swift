import HeraldAPI
import HeraldDomain
import Synchronization

/// A registry that keeps everything in memory and behaves like the real one where the API
/// depends on it: versions grow by one per write, `If-Match` mismatches are
/// `preconditionFailed`, deleted registration ids are `gone`, and ids are only valid when
/// issued. `writes` counts every accepted change, so tests can prove a refused request
/// wrote nothing.
final class InMemoryRegistry: RegistrationStore, Sendable {
    struct State {
        var nextId = 1
        var issued: Set<String> = []
        var registrations: [String: Registration] = [:]
        var deletedRegistrations: Set<String> = []
        var installations: [String: StoredInstallation] = [:]
        var deletedInstallations: Set<String> = []
        var writes = 0
        var ready = true
    }

    let state = Mutex(State())
    /// The registries of hubs other than the default, made on first use.
    let hubs = Mutex<[HubName: InMemoryRegistry]>([:])

    func store(for hub: HubName) -> any RegistrationStore {
        if hub.isDefault { return self }
        return hubs.withLock { hubs in
            if let existing = hubs[hub] { return existing }
            let made = InMemoryRegistry()
            hubs[hub] = made
            return made
        }
    }

    var writes: Int { state.withLock { $0.writes } }

    func setReady(_ ready: Bool) { state.withLock { $0.ready = ready } }

    func issueRegistrationId() -> String {
        state.withLock { state in
            let id = "reg-\(state.nextId)"
            state.nextId += 1
            state.issued.insert(id)
            return id
        }
    }

    func isIssued(_ id: String) -> Bool {
        state.withLock { $0.issued.contains(id) }
    }

    func registration(id: String) async throws(RegistryError) -> RegistrationLookup {
        state.withLock { state in
            if let registration = state.registrations[id] { return .found(registration) }
            return state.deletedRegistrations.contains(id) ? .gone : .notFound
        }
    }

    func put(_ registration: Registration, expectedVersion: Int64?) async throws(RegistryError) -> Registration {
        try state.withLock { (state) throws(RegistryError) -> Registration in
            let id = registration.registrationId
            if state.deletedRegistrations.contains(id) { throw RegistryError(code: .gone, message: "registration \(id) was deleted") }
            let current = state.registrations[id]
            if let expectedVersion, current?.version != expectedVersion {
                throw RegistryError(
                    code: .preconditionFailed, message: "registration \(id) is at version \(current?.version ?? 0), not \(expectedVersion)",
                    currentVersion: current?.version)
            }
            var stored = registration
            stored.version = (current?.version ?? 0) + 1
            state.registrations[id] = stored
            state.writes += 1
            return stored
        }
    }

    func delete(id: String, expectedVersion: Int64?) async throws(RegistryError) {
        try state.withLock { (state) throws(RegistryError) in
            if state.deletedRegistrations.contains(id) { throw RegistryError(code: .gone, message: "registration \(id) was deleted") }
            guard let current = state.registrations[id] else {
                throw RegistryError(code: .notFound, message: "registration \(id) does not exist")
            }
            if let expectedVersion, current.version != expectedVersion {
                throw RegistryError(
                    code: .preconditionFailed, message: "registration \(id) is at version \(current.version), not \(expectedVersion)",
                    currentVersion: current.version)
            }
            state.registrations[id] = nil
            state.deletedRegistrations.insert(id)
            state.writes += 1
        }
    }

    func list(_ query: RegistrationQuery) async throws(RegistryError) -> RegistrationPage {
        if let conflict = query.conflict { throw RegistryError(code: .invalid, message: conflict.message, issues: [conflict]) }
        return state.withLock { state in
            let matching = state.registrations.values
                .filter { query.tag == nil || $0.tags.contains(query.tag!) }
                .filter { query.handle == nil || $0.handle == query.handle }
                .filter { query.handlePrefix == nil || $0.handle.hasPrefix(query.handlePrefix!) }
                .sorted { $0.registrationId < $1.registrationId }
            let start = query.cursor.flatMap(Int.init) ?? 0
            let end = min(start + query.limit, matching.count)
            return RegistrationPage(items: Array(matching[start..<end]), nextCursor: end < matching.count ? String(end) : nil)
        }
    }

    func installation(id: String) async throws(RegistryError) -> InstallationLookup {
        state.withLock { state in
            if let stored = state.installations[id] { return .found(stored) }
            return state.deletedInstallations.contains(id) ? .gone : .notFound
        }
    }

    func putInstallation(_ installation: Installation, expectedVersion: Int64?) async throws(RegistryError) -> StoredInstallation {
        try state.withLock { (state) throws(RegistryError) -> StoredInstallation in
            let id = installation.installationId
            let current = state.installations[id]
            if let expectedVersion, current?.version != expectedVersion {
                throw RegistryError(
                    code: .preconditionFailed, message: "installation \(id) is at version \(current?.version ?? 0), not \(expectedVersion)",
                    currentVersion: current?.version)
            }
            let stored = StoredInstallation(installation: installation, version: (current?.version ?? 0) + 1)
            state.installations[id] = stored
            state.deletedInstallations.remove(id)
            state.writes += 1
            return stored
        }
    }

    func deleteInstallation(id: String, expectedVersion: Int64?) async throws(RegistryError) {
        try state.withLock { (state) throws(RegistryError) in
            if state.deletedInstallations.contains(id) { throw RegistryError(code: .gone, message: "installation \(id) was deleted") }
            guard let current = state.installations[id] else {
                throw RegistryError(code: .notFound, message: "installation \(id) does not exist")
            }
            if let expectedVersion, current.version != expectedVersion {
                throw RegistryError(
                    code: .preconditionFailed, message: "installation \(id) is at version \(current.version), not \(expectedVersion)",
                    currentVersion: current.version)
            }
            state.installations[id] = nil
            state.deletedInstallations.insert(id)
            state.writes += 1
        }
    }

    func listInstallations(_ query: InstallationQuery) async throws(RegistryError) -> InstallationPage {
        state.withLock { state in
            let matching = state.installations.values
                .filter { stored in
                    query.tag == nil || stored.installation.registrations(version: stored.version).contains { $0.tags.contains(query.tag!) }
                }
                .filter { query.userId == nil || $0.installation.userId == query.userId }
                .sorted { $0.installation.installationId < $1.installation.installationId }
            let start = query.cursor.flatMap(Int.init) ?? 0
            let end = min(start + query.limit, matching.count)
            return InstallationPage(items: Array(matching[start..<end]), nextCursor: end < matching.count ? String(end) : nil)
        }
    }

    func isReady() async -> Bool {
        state.withLock { $0.ready }
    }
}
