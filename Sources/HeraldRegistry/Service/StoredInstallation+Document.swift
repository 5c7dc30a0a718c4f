import Foundation
import HeraldDomain

/// The installation document stored in Kafka (`$installation:<id>`) and at
/// `herald:{s}:inst:<id>`: Azure's installation shape plus `version`, keys sorted, so the
/// same installation always has the same bytes.
extension StoredInstallation {
    public func documentBytes() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(installation),
            case .object(var members)? = try? JSONValue.parse(Array(data))
        else { preconditionFailure("an Installation always encodes to a JSON object") }
        members.append(JSONMember(key: "version", value: .number(String(version))))
        var bytes: [UInt8] = []
        JSONValue.object(members).write(into: &bytes, sortingKeys: true)
        return bytes
    }

    public init(document: [UInt8]) throws(RegistryRecordError) {
        let installation: Installation
        do {
            installation = try JSONDecoder().decode(Installation.self, from: Data(document))
        } catch {
            throw RegistryRecordError(message: "installation document is unreadable: \(error)")
        }
        guard let version = try Self.version(inDocument: document) else {
            throw RegistryRecordError(message: "installation document of \(installation.installationId) has no version")
        }
        self.init(installation: installation, version: version)
    }

    static func version(inDocument document: [UInt8]) throws(RegistryRecordError) -> Int64? {
        let root: JSONValue
        do {
            root = try JSONValue.parse(document)
        } catch {
            throw RegistryRecordError(message: "installation document is not JSON: \(error.description)")
        }
        guard case .number(let text)? = root["version"] else { return nil }
        return Int64(text)
    }
}
