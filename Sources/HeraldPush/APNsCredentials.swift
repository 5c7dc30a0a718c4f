import Foundation
import JWTKit

/// One APNs provider (an Apple developer team's signing key) and the apps it pushes for.
///
/// Token-based authentication: the `.p8` key signs an ES256 provider token with the key id
/// and team id; one key serves every app of the team. `topics` are the apps' bundle ids
/// (the `apns-topic` of a request); a delivery whose headers name no topic goes to the first.
public struct APNsCredentials: Sendable {
    public var teamId: String
    public var keyId: String
    public var topics: [String]
    public var endpoint: URL
    /// Where the key came from (a file path), for errors and logs; the key itself is never logged.
    public var keySource: String
    let signingKey: ES256PrivateKey

    public static let production = URL(string: "https://api.push.apple.com")!
    public static let sandbox = URL(string: "https://api.sandbox.push.apple.com")!

    /// Reads and checks a provider's settings; every problem names the file or setting and field.
    /// - Parameters:
    ///   - keyFile: path of the `.p8` file (PKCS#8 PEM of a P-256 key).
    ///   - endpoint: `production`, `sandbox`, or a base URL (a local server in tests).
    public static func load(keyFile: String, keyId: String, teamId: String, topics: [String], endpoint: String)
        throws(PushConfigurationError)
        -> APNsCredentials
    {
        let pem: String
        do {
            pem = try String(contentsOfFile: keyFile, encoding: .utf8)
        } catch {
            throw PushConfigurationError(source: keyFile, problem: "cannot read the APNs key file (\(error.localizedDescription))")
        }
        return try make(pem: pem, keySource: keyFile, keyId: keyId, teamId: teamId, topics: topics, endpoint: endpoint)
    }

    /// The same from a PEM already in memory.
    public static func make(pem: String, keySource: String, keyId: String, teamId: String, topics: [String], endpoint: String)
        throws(PushConfigurationError) -> APNsCredentials
    {
        guard pem.contains("-----BEGIN PRIVATE KEY-----") else {
            throw PushConfigurationError(
                source: keySource, field: "PEM", problem: "not a .p8 key: expected a \"-----BEGIN PRIVATE KEY-----\" block")
        }
        let key: ES256PrivateKey
        do {
            key = try ES256PrivateKey(pem: pem)
        } catch {
            throw PushConfigurationError(source: keySource, field: "PEM", problem: "not a P-256 private key (\(error))")
        }
        for (name, value) in [("key id", keyId), ("team id", teamId)] {
            guard value.count == 10, value.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
                throw PushConfigurationError(
                    source: keySource, field: name, problem: "\"\(value)\" is not a 10-character Apple \(name)")
            }
        }
        let topics = topics.filter { !$0.isEmpty }
        guard !topics.isEmpty else {
            throw PushConfigurationError(source: keySource, field: "topics", problem: "no app bundle id (apns-topic) given")
        }
        return APNsCredentials(
            teamId: teamId, keyId: keyId, topics: topics, endpoint: try Self.endpoint(endpoint, source: keySource),
            keySource: keySource, signingKey: key)
    }

    static func endpoint(_ text: String, source: String) throws(PushConfigurationError) -> URL {
        switch text.lowercased() {
        case "", "production": return production
        case "sandbox", "development": return sandbox
        default:
            guard let url = URL(string: text), url.scheme == "https", url.host != nil else {
                throw PushConfigurationError(
                    source: source, field: "endpoint", problem: "\"\(text)\" is neither production, sandbox nor an https:// URL")
            }
            return url
        }
    }
}
