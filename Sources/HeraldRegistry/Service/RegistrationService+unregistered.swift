import Foundation
import HeraldDomain

/// What became of a registration after its push service said its token is dead.
public enum UnregisteredRemoval: Sendable, Hashable {
    /// Deleted through `herald.registrations` (the installation, for an installation's).
    case removed(id: String, installation: Bool)
    /// Kept: it holds another handle now, or changed after the token died.
    case kept(reason: String)
    /// Already gone.
    case absent
}

extension RegistrationService {
    /// Removes the registration `registrationId` after a push to `pushedHandle` was answered
    /// "unregistered", unless it changed since (`TokenInvalidation.mayRemove`: same handle,
    /// version not newer than `invalidSince`). The delete is a change on
    /// `herald.registrations` conditional on the version that was checked (If-Match), so a
    /// re-registration that lands in between is kept. A registration that belongs to an
    /// installation (its `$InstallationId:{id}` tag) removes the installation: its push
    /// channel is what died.
    public func removeUnregistered(registrationId: String, pushedHandle: String, invalidSince: Date) async throws(RegistryError)
        -> UnregisteredRemoval
    {
        guard case .found(let current) = try await registration(id: registrationId) else { return .absent }
        guard TokenInvalidation.mayRemove(current: current, pushedHandle: pushedHandle, invalidSince: invalidSince) else {
            return .kept(
                reason: current.handle == pushedHandle
                    ? "registration \(registrationId) changed after the token was found invalid"
                    : "registration \(registrationId) holds another handle now")
        }
        let installationId = current.tags.lazy.compactMap(Self.installationId(inTag:)).first
        do {
            if let installationId {
                try await deleteInstallation(id: installationId, expectedVersion: current.version)
            } else {
                // As `delete`, without its check that this deployment issued the id: the
                // registration exists, and a sender need not hold the id secret.
                let version = try await reserve(
                    member: registrationId, slotId: registrationId, expected: current.version, refuseGone: true,
                    what: "registration \(registrationId)")
                try await record(
                    [.registrationDeleted(id: registrationId, version: version)], member: registrationId, slotId: registrationId,
                    version: version, what: "registration \(registrationId)")
            }
        } catch {
            switch error.code {
            case .preconditionFailed: return .kept(reason: "registration \(registrationId) changed while it was being removed")
            case .gone, .notFound: return .absent
            default: throw error
            }
        }
        return .removed(id: installationId ?? registrationId, installation: installationId != nil)
    }

    /// `x` of a `$InstallationId:{x}` tag.
    static func installationId(inTag tag: String) -> String? {
        let prefix = "$InstallationId:{"
        guard tag.hasPrefix(prefix), tag.hasSuffix("}"), tag.count > prefix.count + 1 else { return nil }
        return String(tag.dropFirst(prefix.count).dropLast())
    }
}
