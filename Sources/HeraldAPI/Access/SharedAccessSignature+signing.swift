import Crypto
import Foundation

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
