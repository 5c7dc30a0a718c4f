import Foundation
import JWTKit

/// An APNs token-signing key made at run time, as Apple hands it out: a P-256 key in a `.p8`
/// file (PKCS#8 PEM), a 10-character key id and the team id it belongs to.
public struct LocalAPNsKey: Sendable {
    /// The key id (`kid` of the provider tokens), 10 characters.
    public let keyId: String
    /// The team id (`iss` of the provider tokens), 10 characters.
    public let teamId: String
    /// The private key, PKCS#8 PEM ("-----BEGIN PRIVATE KEY-----"), the content of the `.p8` file.
    public let pem: String
    /// The public key the APNs server verifies provider tokens with.
    public let publicKey: ES256PublicKey

    /// Generates a new key; ids are random unless given.
    public init(keyId: String = LocalAPNsKey.randomIdentifier(), teamId: String = LocalAPNsKey.randomIdentifier()) {
        let key = ES256PrivateKey()
        self.keyId = keyId
        self.teamId = teamId
        self.pem = key.pemRepresentation
        self.publicKey = key.publicKey
    }

    /// Writes the key to `AuthKey_<keyId>.p8` in `directory` and returns its path.
    public func write(in directory: URL) throws -> String {
        let file = directory.appendingPathComponent("AuthKey_\(keyId).p8")
        try Data(pem.utf8).write(to: file, options: .atomic)
        return file.path
    }

    /// A random identifier of uppercase letters and digits, like Apple's key and team ids.
    public static func randomIdentifier(length: Int = 10) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        return String((0..<length).map { _ in alphabet.randomElement()! })
    }
}
