import HeraldDomain

/// One change of the system of record: what one `herald.registrations` record says.
public enum RegistryChange: Sendable, Hashable {
    case registration(IndexedRegistration)
    case registrationDeleted(id: String, version: Int64)
    /// An installation document (`StoredInstallation.documentBytes`), keyed `$installation:<id>`.
    case installation(id: String, version: Int64, document: [UInt8])
    case installationDeleted(id: String, version: Int64)

    /// The id whose slot this change belongs to (the installation id for installations).
    public var slotId: String {
        switch self {
        case .registration(let entry): entry.id
        case .registrationDeleted(let id, _), .installation(let id, _, _), .installationDeleted(let id, _): id
        }
    }

    public var version: Int64 {
        switch self {
        case .registration(let entry): entry.version
        case .registrationDeleted(_, let version), .installation(_, let version, _), .installationDeleted(_, let version): version
        }
    }

    public var isDelete: Bool {
        switch self {
        case .registrationDeleted, .installationDeleted: true
        case .registration, .installation: false
        }
    }
}
