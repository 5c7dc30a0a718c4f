import Foundation

/// The protected header of a compact JWS, read before any key is tried (pure Foundation, so
/// the fuzzer builds it without the API's dependencies).
public enum JWTHeader {
    /// What a verifier must know of the header before trying a key.
    public struct Fields: Sendable {
        /// `alg`, nil when absent or not a string.
        public var algorithm: String?
        /// Whether the header has a `crit` member (RFC 7515 §4.1.11).
        public var hasCriticalExtensions: Bool
    }

    /// The protected header of a compact JWS, or nil when it cannot be read.
    public static func read(_ token: Substring) -> Fields? {
        guard let dot = token.firstIndex(of: ".") else { return nil }
        var base64 = token[..<dot].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard base64.count <= 4_096, let data = Data(base64Encoded: base64),
            let header = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return nil }
        return Fields(algorithm: header["alg"] as? String, hasCriticalExtensions: header["crit"] != nil)
    }

    /// The `alg` of a compact JWS's protected header, or nil when it cannot be read.
    public static func algorithm(of token: Substring) -> String? {
        read(token)?.algorithm
    }
}
