import HeraldDomain
import HTTPTypes
import Hummingbird
import NIOCore

/// Reading the parts of a request every route needs, each failure becoming the matching
/// 4xx from `APIError+mapping.swift`.
enum RequestReading {
    /// The whole body, refusing more than `limit` bytes with 413.
    static func body(of request: Request, limit: Int) async throws -> [UInt8] {
        // Refuse early when the client announces an oversized body.
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
            throw APIError.requestTooLarge(limit: limit)
        }
        do {
            var buffer = try await request.body.collect(upTo: limit)
            return buffer.readBytes(length: buffer.readableBytes) ?? []
        } catch is NIOTooManyBytesError {
            throw APIError.requestTooLarge(limit: limit)
        }
    }

    /// The body parsed as JSON, with the line and column of a syntax error.
    static func json(_ bytes: [UInt8], what: String) throws(APIError) -> JSONValue {
        do {
            return try JSONValue.parse(bytes)
        } catch {
            throw .malformedJSON(error, what: what)
        }
    }

    /// The hub a request is for: the `{hub}` of `/v1/hubs/{hub}/…`, or the default hub on
    /// the routes without one.
    static func hub(of context: some RequestContext) throws(APIError) -> HubName {
        guard let text = context.parameters.get("hub") else { return .default }
        guard let hub = HubName(text) else { throw .invalidParameter("hub", HubName.problem(text) ?? "not a hub name") }
        return hub
    }

    /// The path of the request's hub under which its resources live: `/v1` for the default
    /// hub, `/v1/hubs/<hub>` for the others.
    static func hubPath(of context: some RequestContext) throws(APIError) -> String {
        let hub = try hub(of: context)
        return hub.isDefault ? "/v1" : "/v1/hubs/\(hub)"
    }

    /// A path parameter.
    static func parameter(_ name: String, of context: some RequestContext) throws(APIError) -> String {
        guard let value = context.parameters.get(name) else { throw .invalidParameter(name, "the path has no \(name)") }
        return value
    }

    /// `If-Match` as an expected version: `nil` when absent or `*`; a quoted (or bare, or
    /// weak `W/"…"`) decimal version otherwise.
    /// The version a `DELETE` must match: the `If-Match` one, else, for a caller who is not a
    /// manager, the version `owned` returns after checking that the caller owns the device, so
    /// that ownership is checked on the version that is then deleted.
    static func deletionVersion(
        _ request: Request, caller: Caller, owned: () async throws -> Int64
    ) async throws -> Int64? {
        var expected = try expectedVersion(request)
        if !caller.isManager {
            let current = try await owned()
            if expected == nil { expected = current }
        }
        return expected
    }

    static func expectedVersion(_ request: Request) throws(APIError) -> Int64? {
        guard var text = request.headers[.ifMatch]?.trimmingCharacters(in: .whitespaces), !text.isEmpty, text != "*" else { return nil }
        if text.hasPrefix("W/") { text.removeFirst(2) }
        if text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") { text = String(text.dropFirst().dropLast()) }
        guard let version = Int64(text), version >= 0 else {
            throw .invalidParameter(
                "If-Match", "If-Match must be an ETag this API returned, such as \"3\"; got \(request.headers[.ifMatch]!)")
        }
        return version
    }

    /// `ETag` for a stored version.
    static func entityTag(_ version: Int64) -> String { "\"\(version)\"" }

    /// `limit` and `cursor` of a list request.
    static func page(_ request: Request, limits: APILimits) throws(APIError) -> (limit: Int, cursor: String?) {
        let parameters = request.uri.queryParameters
        var limit = limits.defaultPageSize
        if let text = parameters["limit"] {
            guard let value = Int(text), (1...limits.maxPageSize).contains(value) else {
                throw .invalidParameter("limit", "limit must be an integer from 1 to \(limits.maxPageSize); got \"\(text)\"")
            }
            limit = value
        }
        let cursor = parameters["cursor"].map(String.init).flatMap { $0.isEmpty ? nil : $0 }
        return (limit, cursor)
    }

    /// `?limit=`: `defaultValue` when absent, else a whole number from 1 to `maximum` (400
    /// naming `limit` otherwise).
    static func limit(_ request: Request, defaultValue: Int, maximum: Int) throws(APIError) -> Int {
        guard let text = query("limit", of: request) else { return defaultValue }
        guard let value = Int(text), (1...maximum).contains(value) else {
            throw .invalidParameter("limit", "limit must be an integer from 1 to \(maximum); got \"\(text)\"")
        }
        return value
    }

    /// An optional query parameter, empty meaning absent.
    static func query(_ name: String, of request: Request) -> String? {
        request.uri.queryParameters[Substring(name)].map(String.init).flatMap { $0.isEmpty ? nil : $0 }
    }

    /// A tag given as a query filter.
    static func tagFilter(_ request: Request) throws(APIError) -> String? {
        guard let tag = query("tag", of: request) else { return nil }
        if let problem = TagRules.problem(with: tag) { throw .invalidParameter("tag", problem) }
        return tag
    }
}

extension Response {
    /// A JSON response written with the domain's order-preserving writer, so documents
    /// come back in the contract's field order.
    static func json(_ value: JSONValue, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        var bytes: [UInt8] = []
        value.write(into: &bytes)
        bytes.append(UInt8(ascii: "\n"))
        var fields = headers
        fields[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
