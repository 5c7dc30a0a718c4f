import HeraldDomain

/// The registration system of record as the API sees it. HeraldRegistry's service has
/// exactly these methods, so `HeraldApp` conforms it with an empty extension; tests use an
/// in-memory fake.
public protocol RegistrationStore: ReadinessChecking {
    /// A fresh id for `PUT /v1/registrations/{id}`.
    func issueRegistrationId() -> String
    /// Whether `id` came from ``issueRegistrationId()``; other ids get 410 Gone on PUT.
    func isIssued(_ id: String) -> Bool
    func registration(id: String) async throws(RegistryError) -> RegistrationLookup
    /// Writes `registration`; with `expectedVersion`, only if the stored version equals it.
    func put(_ registration: Registration, expectedVersion: Int64?) async throws(RegistryError) -> Registration
    func delete(id: String, expectedVersion: Int64?) async throws(RegistryError)
    func list(_ query: RegistrationQuery) async throws(RegistryError) -> RegistrationPage
    func installation(id: String) async throws(RegistryError) -> InstallationLookup
    func putInstallation(_ installation: Installation, expectedVersion: Int64?) async throws(RegistryError) -> StoredInstallation
    func deleteInstallation(id: String, expectedVersion: Int64?) async throws(RegistryError)
    func listInstallations(_ query: InstallationQuery) async throws(RegistryError) -> InstallationPage
}
