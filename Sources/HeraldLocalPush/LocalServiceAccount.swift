import Foundation
import JWTKit
import _CryptoExtras

/// A Google service account made at run time: an RSA-2048 key and the JSON document Google
/// hands out for it, with `token_uri` pointing at a local FCM server.
public struct LocalServiceAccount: Sendable {
    /// The Firebase project (`project_id`).
    public let projectId: String
    /// The account (`client_email`), the `iss` of its token assertions.
    public let clientEmail: String
    /// The key's id (`private_key_id`), 40 hex digits.
    public let privateKeyId: String
    /// The private key, PKCS#8 PEM ("-----BEGIN PRIVATE KEY-----").
    public let privateKeyPEM: String
    /// The public key the token endpoint verifies assertions with.
    public let publicKey: JWTKit.Insecure.RSA.PublicKey

    /// Generates a new key for an account of `projectId`.
    public init(projectId: String = "herald-test", accountName: String = "herald-sender") throws {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        self.projectId = projectId
        self.clientEmail = "\(accountName)@\(projectId).iam.gserviceaccount.com"
        self.privateKeyId = randomHex(bytes: 20)
        self.privateKeyPEM = key.pkcs8PEMRepresentation
        self.publicKey = try JWTKit.Insecure.RSA.PublicKey(backing: key.publicKey)
    }

    /// The service-account JSON document, with `token_uri` set to `tokenURI`.
    public func json(tokenURI: String) -> [UInt8] {
        let document: [String: String] = [
            "type": "service_account",
            "project_id": projectId,
            "private_key_id": privateKeyId,
            "private_key": privateKeyPEM,
            "client_email": clientEmail,
            "client_id": "100000000000000000001",
            "auth_uri": "https://accounts.google.com/o/oauth2/auth",
            "token_uri": tokenURI,
            "universe_domain": "googleapis.com",
        ]
        // A dictionary of strings always serializes.
        let data = try! JSONSerialization.data(withJSONObject: document, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        return Array(data)
    }

    /// Writes the JSON document to `service-account-<project>.json` in `directory` and returns its path.
    public func write(in directory: URL, tokenURI: String) throws -> String {
        let file = directory.appendingPathComponent("service-account-\(projectId).json")
        try Data(json(tokenURI: tokenURI)).write(to: file, options: .atomic)
        return file.path
    }
}
