import Foundation
import HeraldDomain

// Installations are stored as their document (`$installation:<id>`) plus one registration
// per template (`<installationId>:<template>`, or the installation id for a native one),
// all in the installation's slot and all written with the installation's version.
extension RegistrationService {
    public func installation(id: String) async throws(RegistryError) -> InstallationLookup {
        let stored = try await redis("reading installation \(id)") { try await self.index.storedInstallation(id: id) }
        switch stored {
        case .live(let document): return .found(try Self.decodeInstallation(document, id: id))
        case .gone: return .gone
        case .absent: return .notFound
        }
    }

    /// Creates or replaces an installation: writes its document and its expanded
    /// registrations, and tombstones the registrations of templates it no longer has.
    /// A deleted installation id may be used again (ids are chosen by the app, as in Azure).
    public func putInstallation(_ installation: Installation, expectedVersion: Int64?) async throws(RegistryError) -> StoredInstallation {
        var installation = installation
        installation.hub = hub
        let id = installation.installationId
        do {
            _ = try installation.validated(limits: configuration.limits)
        } catch {
            throw RegistryError(code: .invalid, message: "installation \(id) is invalid", issues: error.issues)
        }
        await alertYield.waitWhileBreaking()
        let member = RegistryChange.installationKeyPrefix + id
        let version = try await reserve(
            member: member, slotId: id, expected: expectedVersion, refuseGone: false, what: "installation \(id)")
        let previous = try await currentRegistrationIds(ofInstallation: id)
        let registrations = installation.registrations(version: version)
        let kept = Set(registrations.map(\.registrationId))
        let stored = StoredInstallation(installation: installation, version: version)
        var changes = registrations.map { RegistryChange.registration(IndexedRegistration($0)) }
        changes += previous.subtracting(kept).sorted().map { RegistryChange.registrationDeleted(id: $0, version: version) }
        changes.append(.installation(id: id, version: version, document: stored.documentBytes()))
        try await record(changes, member: member, slotId: id, version: version, what: "installation \(id)")
        return stored
    }

    public func deleteInstallation(id: String, expectedVersion: Int64?) async throws(RegistryError) {
        switch try await installation(id: id) {
        case .gone: throw RegistryError(code: .gone, message: "installation \(id) was already deleted")
        case .notFound: throw RegistryError(code: .notFound, message: "installation \(id) does not exist")
        case .found: break
        }
        await alertYield.waitWhileBreaking()
        let member = RegistryChange.installationKeyPrefix + id
        let version = try await reserve(
            member: member, slotId: id, expected: expectedVersion, refuseGone: false, what: "installation \(id)")
        let previous = try await currentRegistrationIds(ofInstallation: id)
        var changes = previous.sorted().map { RegistryChange.registrationDeleted(id: $0, version: version) }
        changes.append(.installationDeleted(id: id, version: version))
        try await record(changes, member: member, slotId: id, version: version, what: "installation \(id)")
    }

    /// Installations carrying `tag` (on the installation or on one of its templates), of
    /// `userId`, of both, or all. The cursor is `<slot>:<last installation id returned>`;
    /// installations come slot by slot in id order, each exactly once.
    public func listInstallations(_ query: InstallationQuery) async throws(RegistryError) -> InstallationPage {
        try checkLimit(query.limit)
        let userTag = query.userId.map { "$UserId:{\($0)}" }
        let membership: RegistrationIndex.Membership =
            if let userTag {
                .tag(userTag)
            } else if let tag = query.tag {
                .tag(tag)
            } else {
                .all
            }
        // With both, walk the user's (smaller) set and keep installations that also carry the tag.
        let alsoTag = userTag != nil ? query.tag : nil
        let slotCount = index.layout.slotCount
        var slot = 0
        var after = ""
        if let text = query.cursor {
            guard let colon = text.firstIndex(of: ":"), let parsed = Int(text[..<colon]), (0..<slotCount).contains(parsed) else {
                throw Self.invalidCursor(text)
            }
            slot = parsed
            after = String(text[text.index(after: colon)...])
        }
        var items: [StoredInstallation] = []
        while slot < slotCount {
            let members = try await redis("listing installations") { try await self.index.members(membership, slot: slot) }
            var candidates = Set<String>()
            for member in members {
                let installationId = member.firstIndex(of: ":").map { String(member[..<$0]) } ?? member
                if installationId > after { candidates.insert(installationId) }
            }
            let ordered = candidates.sorted()
            let documents = try await redis("reading installations") { try await self.index.installationDocuments(ids: ordered) }
            for (installationId, document) in zip(ordered, documents) {
                guard let document else { continue }
                let stored = try Self.decodeInstallation(document, id: installationId)
                if let alsoTag, !stored.installation.registrations(version: 0).contains(where: { $0.tags.contains(alsoTag) }) {
                    continue
                }
                items.append(stored)
                if items.count == query.limit {
                    return InstallationPage(items: items, nextCursor: "\(slot):\(installationId)")
                }
            }
            slot += 1
            after = ""
        }
        return InstallationPage(items: items, nextCursor: nil)
    }

    /// The registration ids the stored installation expands to (empty when there is none).
    func currentRegistrationIds(ofInstallation id: String) async throws(RegistryError) -> Set<String> {
        guard case .found(let current) = try await installation(id: id) else { return [] }
        return Set(current.installation.registrations(version: current.version).map(\.registrationId))
    }

    static func decodeInstallation(_ document: [UInt8], id: String) throws(RegistryError) -> StoredInstallation {
        do {
            return try StoredInstallation(document: document)
        } catch {
            throw RegistryError(code: .unavailable, message: "stored document of installation \(id) is unreadable: \(error.message)")
        }
    }
}
