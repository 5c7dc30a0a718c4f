import Foundation
import JWTKit

/// A Google service account allowed to send with FCM HTTP v1 for one Firebase project: the
/// JSON key file Google issues (`project_id`, `client_email`, `private_key`, `token_uri`).
public struct FCMServiceAccount: Sendable {
    public var projectId: String
    public var clientEmail: String
    public var tokenURI: URL
    public var privateKeyId: String?
    /// The file it came from, for errors and logs; the key itself is never logged.
    public var source: String
    let signingKey: Insecure.RSA.PrivateKey

    public static func load(file: String) throws(PushConfigurationError) -> FCMServiceAccount {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: file))
        } catch {
            throw PushConfigurationError(source: file, problem: "cannot read the service account file (\(error.localizedDescription))")
        }
        return try parse(Array(data), source: file)
    }

    public static func parse(_ json: [UInt8], source: String) throws(PushConfigurationError) -> FCMServiceAccount {
        guard let object = try? JSONSerialization.jsonObject(with: Data(json)) as? [String: Any] else {
            throw PushConfigurationError(source: source, problem: "not a JSON object (a Google service account key file)")
        }
        func field(_ name: String) throws(PushConfigurationError) -> String {
            guard let value = object[name] as? String, !value.isEmpty else {
                throw PushConfigurationError(source: source, field: name, problem: "missing or not a string")
            }
            return value
        }
        if let type = object["type"] as? String, type != "service_account" {
            throw PushConfigurationError(source: source, field: "type", problem: "is \"\(type)\", expected \"service_account\"")
        }
        let projectId = try field("project_id")
        let clientEmail = try field("client_email")
        let pem = try field("private_key")
        let key: Insecure.RSA.PrivateKey
        do {
            key = try Insecure.RSA.PrivateKey(pem: pem)
        } catch {
            throw PushConfigurationError(source: source, field: "private_key", problem: "not an RSA private key in PEM (\(error))")
        }
        let tokenText = (object["token_uri"] as? String) ?? "https://oauth2.googleapis.com/token"
        guard let tokenURI = URL(string: tokenText), tokenURI.scheme == "https", tokenURI.host != nil else {
            throw PushConfigurationError(source: source, field: "token_uri", problem: "\"\(tokenText)\" is not an https:// URL")
        }
        return FCMServiceAccount(
            projectId: projectId, clientEmail: clientEmail, tokenURI: tokenURI, privateKeyId: object["private_key_id"] as? String,
            source: source, signingKey: key)
    }
}
