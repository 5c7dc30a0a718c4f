import HeraldAPI

/// Start-up checks that keep development credentials out of production.
///
/// Unless `HERALD_ALLOW_DEMO_KEYS` is true (the embedded stack sets it; `herald-local demo` makes its
/// own random keys), `herald api` and `herald worker` refuse to start with a key published in
/// this repository, a missing registration-id secret, or a key shorter than 32 bytes. The
/// error names the setting and never its value.
extension HeraldSettings {
    /// Values printed in docker-compose.yml, deploy/ and the docs, and the built-in id secret.
    static let publishedDemoValues: Set<String> = [
        "bGlzdGVuLWtleS1jaGFuZ2UtbWU=", "ZnVsbC1rZXktY2hhbmdlLW1l",
        "user-token-key-change-me-at-least-32-bytes", "id-secret-change-me", "herald-development-secret",
    ]

    /// Shortest accepted key or secret, in bytes (a 256-bit HMAC key).
    static let minimumSecretBytes = 32

    public enum SecretUse: Sendable { case api, worker }

    public var allowsDemoKeys: Bool {
        ["true", "1", "yes"].contains(self[.allowDemoKeys].lowercased())
    }

    /// Throws a `SecretError` naming the first unsafe credential. The worker checks only the
    /// credentials it is given (it issues no ids and checks no tokens itself).
    public func checkSecrets(for use: SecretUse) throws {
        guard !allowsDemoKeys else { return }
        let policies = try SharedAccessPolicy.parseList(self[.policies])
        for policy in policies {
            try Self.check(policy.key, setting: .policies, what: "the key of policy \(policy.name)")
        }
        if !self[.userTokenKey].isEmpty {
            try Self.check(self[.userTokenKey], setting: .userTokenKey, what: "the user-token key")
        }
        if use == .api || !self[.idSecret].isEmpty {
            guard !self[.idSecret].isEmpty else {
                throw SecretError(
                    setting: .idSecret, problem: "is not set: registration ids would be signed with a built-in development secret")
            }
            try Self.check(self[.idSecret], setting: .idSecret, what: "the registration-id secret")
        }
    }

    private static func check(_ value: String, setting: Setting.Key, what: String) throws {
        if publishedDemoValues.contains(value) {
            throw SecretError(
                setting: setting, problem: "holds \(what) published in Herald's demo files; generate a new one (openssl rand -base64 32)")
        }
        if value.utf8.count < minimumSecretBytes {
            throw SecretError(
                setting: setting, problem: "holds \(what) of \(value.utf8.count) bytes; at least \(minimumSecretBytes) are required")
        }
    }
}

/// An unsafe credential at start-up: one line naming the setting, never its value.
public struct SecretError: Error, CustomStringConvertible {
    public var setting: Setting.Key
    public var problem: String

    public var description: String {
        "\(Setting(setting).environment) \(problem) (set HERALD_ALLOW_DEMO_KEYS=true only for local development)"
    }
}
