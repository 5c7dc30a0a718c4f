import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A small client for Herald's HTTP API, used by `herald registrations ...` and the demo.
public struct HeraldHTTPClient: Sendable {
    public struct Reply: Sendable {
        public var status: Int
        public var headers: [String: String]
        public var body: Data
        public var text: String { String(decoding: body, as: UTF8.self) }
        public func header(_ name: String) -> String? {
            headers.first { $0.key.lowercased() == name.lowercased() }?.value
        }
    }

    public let baseURL: URL
    /// The `Authorization` header value, e.g. `SharedAccessSignature sr=...` or `Bearer ...`.
    public var authorization: String?

    public init(baseURL: URL, authorization: String? = nil) {
        self.baseURL = baseURL
        self.authorization = authorization
    }

    public func authorized(_ authorization: String?) -> HeraldHTTPClient {
        var copy = self
        copy.authorization = authorization
        return copy
    }

    public func send(
        _ method: String, _ path: String, body: Data? = nil,
        headers: [String: String] = [:], timeout: TimeInterval = 30
    ) async throws -> Reply {
        guard let url = URL(string: path, relativeTo: baseURL) else {
            throw HTTPClientError(message: "invalid path \(path)")
        }
        var request = URLRequest(url: url, timeoutInterval: timeout)
        request.httpMethod = method
        request.httpBody = body
        if body != nil { request.setValue("application/json", forHTTPHeaderField: "Content-Type") }
        if let authorization { request.setValue(authorization, forHTTPHeaderField: "Authorization") }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await URLSession.shared.data(for: request)
        guard let http = response as? HTTPURLResponse else {
            throw HTTPClientError(message: "\(method) \(url.absoluteString): not an HTTP response")
        }
        var replyHeaders: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            replyHeaders[String(describing: name)] = String(describing: value)
        }
        return Reply(status: http.statusCode, headers: replyHeaders, body: data)
    }

    public func json(_ object: Any) throws -> Data {
        try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    }
}

public struct HTTPClientError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }

    public init(message: String) { self.message = message }
}
