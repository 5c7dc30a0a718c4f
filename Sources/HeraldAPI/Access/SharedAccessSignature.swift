import Foundation

/// An Azure-style shared access signature:
/// `SharedAccessSignature sr=<url-encoded resource>&sig=<base64 HMAC-SHA256>&se=<expiry>&skn=<policy>`,
/// where the MAC covers `"<sr as sent>\n<se>"` under the named policy's key.
public struct SharedAccessSignature: Sendable, Hashable {
    /// `sr` exactly as sent (percent-encoded): the text that was signed.
    public var encodedResource: String
    /// `sr` decoded: the URI the token is valid for.
    public var resource: String
    /// The MAC bytes from `sig`.
    public var signature: [UInt8]
    /// `se`: seconds since 1970 after which the token is refused.
    public var expiry: Int64
    /// `skn`: the policy whose key made the MAC.
    public var policyName: String

    /// The `Authorization` scheme name.
    public static let scheme = "SharedAccessSignature"

    /// Parses the part of the header after `SharedAccessSignature `: `&`-separated
    /// `name=value` pairs in any order; unknown names are ignored.
    /// Pure Foundation, like the struct, so the fuzzer (scripts/fuzz, target access-token)
    /// builds it without the API's dependencies.
    public static func parse(_ parameters: Substring) throws(TokenFormatError) -> SharedAccessSignature {
        var fields: [String: String] = [:]
        for pair in parameters.split(separator: "&") {
            guard let equals = pair.firstIndex(of: "=") else {
                throw TokenFormatError("a SharedAccessSignature parameter has no '=': \"\(pair.prefix(40))\"")
            }
            fields[String(pair[..<equals]).trimmingCharacters(in: .whitespaces)] = String(pair[pair.index(after: equals)...])
        }
        for name in ["sr", "sig", "se", "skn"] where fields[name]?.isEmpty ?? true {
            throw TokenFormatError("the SharedAccessSignature has no \(name)= parameter")
        }
        let encodedResource = fields["sr"]!
        guard let resource = encodedResource.removingPercentEncoding else {
            throw TokenFormatError("sr= is not valid percent-encoded UTF-8")
        }
        guard let signatureText = fields["sig"]!.removingPercentEncoding, let signature = Data(base64Encoded: signatureText) else {
            throw TokenFormatError("sig= is not a base64 HMAC-SHA256")
        }
        guard let expiry = Int64(fields["se"]!) else {
            throw TokenFormatError("se= must be the expiry in seconds since 1970")
        }
        guard let policyName = fields["skn"]!.removingPercentEncoding else {
            throw TokenFormatError("skn= is not valid percent-encoded UTF-8")
        }
        return SharedAccessSignature(
            encodedResource: encodedResource, resource: resource, signature: Array(signature), expiry: expiry, policyName: policyName
        )
    }

}

/// A token that is not even well-formed; the authenticator answers 401 `malformed_token`.
public struct TokenFormatError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

extension String {
    /// RFC 3986 percent-encoding as SAS tokens use it: everything but the unreserved
    /// characters is encoded, so the encoded resource is the same text on both ends.
    /// (Decoding is Foundation's `removingPercentEncoding`, which leaves `+` alone, as base64
    /// signatures need, and answers nil for a malformed escape or non-UTF-8.)
    var percentEncodedForSAS: String {
        // Every string can be encoded with a non-empty allowed set.
        addingPercentEncoding(withAllowedCharacters: .rfc3986Unreserved)!
    }
}

extension CharacterSet {
    static let rfc3986Unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}
