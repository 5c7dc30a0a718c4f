import Crypto
import Foundation

extension SharedAccessSignature {
    /// The rights this token grants for a request on `requestResource` (the hub URI
    /// followed by the request path), or the 401 that says why it grants none.
    ///
    /// An unknown policy and a wrong signature get the same answer (`invalid_token`), after
    /// the same work, so a caller cannot learn which policy names exist.
    func verify(
        policies: [String: SharedAccessPolicy], requestResource: String, now: Date, maxLifetime: Int = Int(Int32.max)
    ) throws(APIError) -> SharedAccessPolicy {
        guard Self.hasHost(resource) else {
            throw .unauthenticated("invalid_token", "sr= must be an absolute URI with a host, for example https://hub.example.com/")
        }
        let policy = policies[policyName]
        let message = Data("\(encodedResource)\n\(expiry)".utf8)
        let key = SymmetricKey(data: Data((policy?.key ?? Self.unknownPolicyKey).utf8))
        // isValidAuthenticationCode compares in constant time.
        var signed = HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: message, using: key)
        if !signed, let secondary = policy?.secondaryKey {
            signed = HMAC<SHA256>.isValidAuthenticationCode(
                signature, authenticating: message, using: SymmetricKey(data: Data(secondary.utf8)))
        }
        guard let policy, signed else {
            throw .unauthenticated("invalid_token", "the SharedAccessSignature is not valid for this hub")
        }
        guard Int64(now.timeIntervalSince1970) < expiry else {
            throw .unauthenticated("token_expired", "the SharedAccessSignature expired at \(expiry) (seconds since 1970)")
        }
        guard expiry - Int64(now.timeIntervalSince1970) <= Int64(maxLifetime) else {
            throw .unauthenticated(
                "token_lifetime_too_long",
                "the SharedAccessSignature is valid until \(expiry) (seconds since 1970), more than \(maxLifetime) seconds from now; this hub accepts tokens valid for \(maxLifetime) seconds at most"
            )
        }
        guard Self.resource(resource, covers: requestResource) else {
            throw .unauthenticated(
                "wrong_resource", "the SharedAccessSignature is for \"\(resource)\", which does not cover \"\(requestResource)\"")
        }
        return policy
    }

    /// Stands in for the key of a policy that does not exist, so both failures cost one HMAC.
    private static let unknownPolicyKey = "herald-no-such-policy-" + UUID().uuidString

    /// `scheme://host...` with a non-empty host.
    static func hasHost(_ uri: String) -> Bool {
        guard let schemeEnd = uri.range(of: "://"), uri.startIndex < schemeEnd.lowerBound else { return false }
        let authority = uri[schemeEnd.upperBound...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let host = authority.split(separator: "@").last.map { $0.split(separator: ":").first ?? "" } ?? ""
        return !host.isEmpty
    }

    /// Whether a token for `scope` may be used on `target`: `scope` is a prefix of
    /// `target` ending at a `/` boundary; scheme and authority ignore case, paths do not.
    static func resource(_ scope: String, covers target: String) -> Bool {
        let scope = normalized(scope)
        let target = normalized(target)
        guard target.hasPrefix(scope) else { return false }
        if scope.count == target.count || scope.hasSuffix("/") { return true }
        return target[target.index(target.startIndex, offsetBy: scope.count)] == "/"
    }

    /// Lower-cases scheme and authority, drops a trailing `/` (except after the authority).
    static func normalized(_ uri: String) -> String {
        var text = Substring(uri)
        var prefix = ""
        if let schemeEnd = text.range(of: "://") {
            let authorityEnd = text[schemeEnd.upperBound...].firstIndex(of: "/") ?? text.endIndex
            prefix = text[..<authorityEnd].lowercased()
            text = text[authorityEnd...]
        }
        while text.count > 1 && text.hasSuffix("/") { text = text.dropLast() }
        if text == "/" { text = "" }
        return prefix + text
    }
}

extension SharedAccessSignature {
    /// A token for `resource` signed with `key`, valid until `expiry`: the whole
    /// `Authorization` header value.
    public static func token(resource: String, policy: String, key: String, expiry: Date) -> String {
        let encodedResource = resource.percentEncodedForSAS
        let seconds = Int64(expiry.timeIntervalSince1970.rounded(.down))
        let mac = Self.mac(encodedResource: encodedResource, expiry: seconds, key: key)
        let signature = Data(mac).base64EncodedString()
        return "\(scheme) sr=\(encodedResource)&sig=\(signature.percentEncodedForSAS)&se=\(seconds)&skn=\(policy.percentEncodedForSAS)"
    }

    static func mac(encodedResource: String, expiry: Int64, key: String) -> [UInt8] {
        let message = Data("\(encodedResource)\n\(expiry)".utf8)
        return Array(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: Data(key.utf8))))
    }
}
