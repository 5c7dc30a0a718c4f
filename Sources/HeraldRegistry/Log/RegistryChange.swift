import Foundation
import HeraldDomain
import HeraldKafka

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

/// How changes are written to and read from `herald.registrations`.
///
/// - key: the registration id, or `$installation:<id>` for an installation document
///   (registration ids never start with `$`), behind `<hub>/` for a hub other than the
///   default (`HubName.recordKey`);
/// - value: the registration JSON (contract shape) or the installation document; null for a delete;
/// - header `herald-version`: the change's version in decimal. A tombstone has no value to
///   carry its version, and the index needs it so a replayed delete cannot undo a newer write.
extension RegistryChange {
    public static let installationKeyPrefix = "$installation:"
    public static let versionHeader = "herald-version"

    /// The Kafka key of this change in the default hub; `RegistryRecord.recordKey` in the others.
    public var recordKey: String {
        switch self {
        case .registration(let entry): entry.id
        case .registrationDeleted(let id, _): id
        case .installation(let id, _, _), .installationDeleted(let id, _): Self.installationKeyPrefix + id
        }
    }

    public func outgoingMessage(topic: String, hub: HubName = .default) -> KafkaOutgoingMessage {
        let value: [UInt8]? =
            switch self {
            case .registration(let entry): entry.document
            case .installation(_, _, let document): document
            case .registrationDeleted, .installationDeleted: nil
            }
        return KafkaOutgoingMessage(
            topic: topic, key: Array(hub.recordKey(recordKey).utf8), value: value,
            headers: [KafkaHeader(key: Self.versionHeader, value: String(version))]
        )
    }

}

/// One `herald.registrations` record as read: the change and the hub it belongs to.
public struct RegistryRecord: Sendable, Hashable {
    public var hub: HubName
    public var change: RegistryChange

    public init(hub: HubName = .default, change: RegistryChange) {
        self.hub = hub
        self.change = change
    }

    public func outgoingMessage(topic: String) -> KafkaOutgoingMessage { change.outgoingMessage(topic: topic, hub: hub) }

    /// Reads a consumed record. A record without a version (produced by another tool) gets
    /// its timestamp in microseconds, the same clock `reserve` uses, so it still orders
    /// sensibly and a reindex derives the same version again. The key names the hub; a
    /// registration whose document names another hub is refused.
    public init(message: KafkaMessage) throws(RegistryRecordError) {
        guard let keyBytes = message.key, let fullKey = String(validating: keyBytes, as: UTF8.self), !fullKey.isEmpty else {
            throw RegistryRecordError(message: "record at \(message.topic)[\(message.partition)]@\(message.offset) has no key")
        }
        guard let (hub, key) = HubName.split(recordKey: fullKey), !key.isEmpty else {
            throw RegistryRecordError(message: "record key \(fullKey) does not start with a hub name before its '/'")
        }
        self.hub = hub
        let headerVersion = message.header(RegistryChange.versionHeader)
            .flatMap { String(validating: $0, as: UTF8.self) }
            .flatMap { Int64($0) }
        let fallbackVersion = message.timestamp.map { Int64(($0.timeIntervalSince1970 * 1_000_000).rounded()) } ?? 1
        if key.hasPrefix(RegistryChange.installationKeyPrefix) {
            let id = String(key.dropFirst(RegistryChange.installationKeyPrefix.count))
            guard let value = message.value else {
                change = .installationDeleted(id: id, version: headerVersion ?? fallbackVersion)
                return
            }
            let version = try StoredInstallation.version(inDocument: value) ?? headerVersion ?? fallbackVersion
            change = .installation(id: id, version: version, document: value)
            return
        }
        guard let value = message.value else {
            change = .registrationDeleted(id: key, version: headerVersion ?? fallbackVersion)
            return
        }
        var entry = try IndexedRegistration(document: value)
        guard entry.id == key else {
            throw RegistryRecordError(message: "record key \(fullKey) names a different registration than its value (\(entry.id))")
        }
        guard entry.hub == hub else {
            throw RegistryRecordError(message: "record key \(fullKey) is in hub \(hub) but its value names hub \(entry.hub)")
        }
        if entry.version == 0 { entry.version = headerVersion ?? fallbackVersion }
        change = .registration(entry)
    }
}
