/// An operator-configured, named key that signs `SharedAccessSignature` tokens, with the
/// rights those tokens carry. The key never travels; only HMACs made with it do.
public struct SharedAccessPolicy: Sendable, Hashable {
    /// The `skn` a token names, for example `DefaultListenSharedAccessSignature`.
    public var name: String
    /// The secret, used as UTF-8 bytes for HMAC-SHA256 (as Azure does with its base64-looking keys).
    public var key: String
    public var rights: Set<AccessRight>

    public init(name: String, key: String, rights: Set<AccessRight>) {
        self.name = name
        self.key = key
        self.rights = rights
    }
}
