/// The operator's API configuration cannot be used; `message` says which setting and why.
public struct APIConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Stable code: `user_token_key_too_short`, `empty_policy_key`, `duplicate_policy`, `invalid_hub_resource`,
    /// `openapi_document_missing`.
    public var code: String
    public var message: String

    public var description: String { "\(code): \(message)" }
}
