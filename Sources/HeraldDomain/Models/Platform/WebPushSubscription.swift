import Foundation

/// A browser's push subscription (the `PushSubscription` a page gets from `pushManager.subscribe`):
/// the push service's endpoint, the browser's P-256 public key (`keys.p256dh`) and its
/// authentication secret (`keys.auth`), without which no message can be encrypted for it (RFC 8291).
///
/// A web push registration's handle is the subscription in one string, the endpoint with the keys
/// in its fragment: `https://push.example.net/abc#p256dh=<key>&auth=<secret>` (base64url, no
/// padding). A fragment is never sent in an HTTP request, so the endpoint stays the URL the
/// sender posts to, and the one string travels through the index, delivery records and receipts
/// as every other platform's handle does.
public struct WebPushSubscription: Sendable, Hashable {
    /// The push service's URL for this browser (https, no fragment).
    public var endpoint: String
    /// The browser's ECDH public key: 65 bytes, the uncompressed point `0x04 || X || Y`.
    public var p256dh: [UInt8]
    /// The browser's authentication secret: 16 bytes.
    public var auth: [UInt8]

    /// `scheme://host[:port]` of the endpoint, the port only when it is not the scheme's
    /// default: the `aud` of a VAPID token (RFC 8292), which serves every endpoint of that origin.
    public var origin: String?
    /// The endpoint's path and query: what a request to the origin asks for.
    public var requestPath: String

    public static let publicKeyBytes = 65
    public static let authSecretBytes = 16

    public init(endpoint: String, p256dh: [UInt8], auth: [UInt8]) {
        self.init(endpoint: endpoint, components: URLComponents(string: endpoint), p256dh: p256dh, auth: auth)
    }

    /// The endpoint is parsed once, by the caller, for its checks, its origin and its path.
    init(endpoint: String, components: URLComponents?, p256dh: [UInt8], auth: [UInt8]) {
        self.endpoint = endpoint
        self.p256dh = p256dh
        self.auth = auth
        origin = components.flatMap(Self.origin(of:))
        var path = components.map { $0.percentEncodedPath.isEmpty ? "/" : $0.percentEncodedPath } ?? "/"
        if let query = components?.percentEncodedQuery { path += "?" + query }
        requestPath = path
    }

    /// The handle form: the endpoint with `#p256dh=…&auth=…`.
    public var handle: String {
        "\(endpoint)#p256dh=\(Base64URL.encode(p256dh))&auth=\(Base64URL.encode(auth))"
    }

    /// The subscription of a handle, or why it is not one.
    public static func parse(handle: String) -> Result<WebPushSubscription, Problem> {
        let hash = handle.firstIndex(of: "#") ?? handle.endIndex
        let components = URLComponents(string: String(handle[..<hash]))
        if let problem = endpointProblem(components) { return .failure(Problem(problem)) }
        guard hash < handle.endIndex else {
            return .failure(
                Problem(
                    "a web push handle carries the subscription's keys: <endpoint>#p256dh=<key>&auth=<secret> (or send the browser's subscription as \"subscription\")"
                ))
        }
        var p256dh: String?
        var auth: String?
        for pair in handle[handle.index(after: hash)...].split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2 else { return .failure(Problem("the handle's fragment has \"\(pair.prefix(40))\", not name=value")) }
            switch parts[0] {
            case "p256dh": p256dh = String(parts[1])
            case "auth": auth = String(parts[1])
            default: return .failure(Problem("the handle's fragment names \"\(parts[0].prefix(40))\"; only p256dh and auth are known"))
            }
        }
        guard let p256dh else { return .failure(Problem("the handle's fragment has no p256dh (the browser's public key)")) }
        guard let auth else { return .failure(Problem("the handle's fragment has no auth (the browser's authentication secret)")) }
        return make(endpoint: String(handle[..<hash]), components: components, p256dh: p256dh, auth: auth)
    }

    /// A subscription from its parts as a browser gives them (`keys.p256dh` and `keys.auth` in
    /// base64url; padding and the standard alphabet are accepted too), checked: the endpoint an
    /// absolute https URL without a fragment, the key a 65-byte uncompressed point, the secret 16 bytes.
    public static func make(endpoint: String, p256dh: String, auth: String) -> Result<WebPushSubscription, Problem> {
        let components = URLComponents(string: endpoint)
        if let problem = endpointProblem(components) { return .failure(Problem(problem)) }
        return make(endpoint: endpoint, components: components, p256dh: p256dh, auth: auth)
    }

    static func make(endpoint: String, components: URLComponents?, p256dh: String, auth: String) -> Result<WebPushSubscription, Problem> {
        guard let key = Base64URL.decode(p256dh) else { return .failure(Problem("keys.p256dh is not base64url")) }
        guard key.count == publicKeyBytes, key.first == 0x04 else {
            return .failure(
                Problem(
                    "keys.p256dh is an uncompressed P-256 point (\(publicKeyBytes) bytes starting with 0x04); this one has \(key.count) bytes"
                ))
        }
        guard let secret = Base64URL.decode(auth) else { return .failure(Problem("keys.auth is not base64url")) }
        guard secret.count == authSecretBytes else {
            return .failure(Problem("keys.auth is \(authSecretBytes) bytes (RFC 8291); this one has \(secret.count)"))
        }
        return .success(WebPushSubscription(endpoint: endpoint, components: components, p256dh: key, auth: secret))
    }

    /// Why the parsed endpoint is not a push resource URL, or nil.
    static func endpointProblem(_ components: URLComponents?) -> String? {
        guard let components, let host = components.host, !host.isEmpty else {
            return "a web push endpoint must be an absolute https URL (the subscription's endpoint)"
        }
        guard components.scheme?.lowercased() == "https" else {
            return "a web push endpoint must use https (RFC 8030), not \(components.scheme.map { "\"\($0)\"" } ?? "no scheme")"
        }
        guard components.fragment == nil else { return "a web push endpoint has no fragment (#…)" }
        return nil
    }

    static func origin(of components: URLComponents) -> String? {
        guard let scheme = components.scheme?.lowercased(), let host = components.host?.lowercased() else { return nil }
        let port = components.port.flatMap { $0 == 443 && scheme == "https" ? nil : $0 }
        return "\(scheme)://\(host)\(port.map { ":\($0)" } ?? "")"
    }

    public struct Problem: Error, Sendable, Hashable, CustomStringConvertible {
        public var description: String
        init(_ description: String) { self.description = description }
    }
}

/// base64url (RFC 4648 §5) as Web Push and JWTs use it: written without padding; read leniently
/// (with or without padding, and the standard alphabet too, as some libraries send it).
public enum Base64URL {
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        var text = Data(bytes).base64EncodedString()
        text = text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }

    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while standard.hasSuffix("=") { standard.removeLast() }
        guard standard.utf8.count % 4 != 1 else { return nil }
        standard += String(repeating: "=", count: (4 - standard.utf8.count % 4) % 4)
        return Data(base64Encoded: standard).map(Array.init)
    }
}

extension JSONFieldReader {
    /// The member `name` read as a browser's subscription and turned into a web push handle:
    /// as the browser gives it (`PushSubscription.toJSON()`: `endpoint`, `expirationTime`,
    /// `keys.p256dh`, `keys.auth`) or as Azure's installations carry it (`endpoint`, `p256dh`,
    /// `auth`); nil when absent or unreadable (issues recorded).
    func webPushHandle(_ name: String, issues: inout [ValidationIssue]) -> String? {
        guard let subscription = object(name, required: false, issues: &issues) else { return nil }
        let nested = subscription.member("keys") != nil
        subscription.refuseUnknownMembers(
            known: nested ? ["endpoint", "expirationTime", "keys"] : ["endpoint", "expirationTime", "p256dh", "auth"], issues: &issues)
        let endpoint = subscription.string("endpoint", required: true, issues: &issues)
        let keys = nested ? subscription.object("keys", required: true, issues: &issues) : subscription
        if nested { keys?.refuseUnknownMembers(known: ["p256dh", "auth"], issues: &issues) }
        let p256dh = keys?.string("p256dh", required: true, issues: &issues)
        let auth = keys?.string("auth", required: true, issues: &issues)
        guard let endpoint, let p256dh, let auth else { return nil }
        switch WebPushSubscription.make(endpoint: endpoint, p256dh: p256dh, auth: auth) {
        case .success(let parsed): return parsed.handle
        case .failure(let problem):
            issues.append(ValidationIssue(field: fieldPath(name), code: ValidationIssue.Code.invalidHandle, message: problem.description))
            return nil
        }
    }
}
