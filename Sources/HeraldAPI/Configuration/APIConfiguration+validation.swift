extension APIConfiguration {
    /// HS256 keys shorter than the hash output are weak (RFC 7518 section 3.2), and
    /// jwt-kit refuses them.
    public static let minimumUserTokenKeyBytes = 32

    /// Refuses settings that would make authentication weak or ambiguous.
    public func validate() throws(APIConfigurationError) {
        if let key = userTokenKey {
            try Self.checkUserTokenKey(key)
        }
        var names = Set<String>()
        for policy in policies {
            if policy.key.isEmpty {
                throw APIConfigurationError(code: "empty_policy_key", message: "shared-access policy \"\(policy.name)\" has an empty key")
            }
            if !names.insert(policy.name).inserted {
                throw APIConfigurationError(code: "duplicate_policy", message: "two shared-access policies are named \"\(policy.name)\"")
            }
        }
        guard hubResource.contains("://") else {
            throw APIConfigurationError(
                code: "invalid_hub_resource",
                message: "the hub resource must be an absolute URI such as http://localhost:8080; got \"\(hubResource)\"")
        }
    }

    static func checkUserTokenKey(_ key: String) throws(APIConfigurationError) {
        guard key.utf8.count >= minimumUserTokenKeyBytes else {
            throw APIConfigurationError(
                code: "user_token_key_too_short",
                message: "the user-token key has \(key.utf8.count) bytes; HS256 needs at least \(minimumUserTokenKeyBytes)"
            )
        }
    }
}
