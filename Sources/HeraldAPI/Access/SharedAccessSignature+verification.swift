import Crypto
import Foundation

extension SharedAccessSignature {
    /// The rights this token grants for a request on `requestResource` (the hub URI
    /// followed by the request path), or the 401 that says why it grants none.
    func verify(policies: [String: SharedAccessPolicy], requestResource: String, now: Date) throws(APIError) -> SharedAccessPolicy {
        guard let policy = policies[policyName] else {
            throw .unauthenticated("unknown_policy", "no shared-access policy is named \"\(policyName)\"")
        }
        let message = Data("\(encodedResource)\n\(expiry)".utf8)
        // isValidAuthenticationCode compares in constant time.
        guard HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: message, using: SymmetricKey(data: Data(policy.key.utf8))) else {
            throw .unauthenticated("invalid_signature", "the SharedAccessSignature was not made with the key of policy \"\(policyName)\"")
        }
        guard Int64(now.timeIntervalSince1970) < expiry else {
            throw .unauthenticated("token_expired", "the SharedAccessSignature expired at \(expiry) (seconds since 1970)")
        }
        guard Self.resource(resource, covers: requestResource) else {
            throw .unauthenticated("wrong_resource", "the SharedAccessSignature is for \"\(resource)\", which does not cover \"\(requestResource)\"")
        }
        return policy
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
