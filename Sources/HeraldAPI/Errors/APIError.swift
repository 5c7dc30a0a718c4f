import HTTPTypes
import HeraldDomain
import Hummingbird

/// Every failed request is answered with one of these, as
/// `{"error": {"code", "message", "field", "issues"}}`. Build them through the factories in
/// `APIError+mapping.swift`, the one place that decides statuses.
public struct APIError: Error, Sendable, HTTPResponseError, CustomStringConvertible {
    public var status: HTTPResponse.Status
    /// Stable machine-readable code, for example `validation_failed` or `token_expired`.
    public var code: String
    public var message: String
    /// The offending field or parameter (`tags[2]`, `limit`, `If-Match`), if there is one.
    public var field: String?
    /// Every problem of a refused document, each with its field path.
    public var issues: [ValidationIssue]
    /// Extra response headers such as `WWW-Authenticate` or `Retry-After`.
    public var headers: HTTPFields

    public init(
        status: HTTPResponse.Status, code: String, message: String, field: String? = nil,
        issues: [ValidationIssue] = [], headers: HTTPFields = [:]
    ) {
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.issues = issues
        self.headers = headers
    }

    public var description: String {
        "\(status.code) \(code): \(message)" + (field.map { " (field \($0))" } ?? "")
    }

    /// The error document.
    public var jsonValue: JSONValue {
        var members = [
            JSONMember(key: "code", value: .string(code)),
            JSONMember(key: "message", value: .string(message)),
        ]
        if let field { members.append(JSONMember(key: "field", value: .string(field))) }
        if !issues.isEmpty {
            members.append(
                JSONMember(
                    key: "issues",
                    value: .array(
                        issues.map { issue in
                            .object([
                                JSONMember(key: "field", value: .string(issue.field)),
                                JSONMember(key: "code", value: .string(issue.code)),
                                JSONMember(key: "message", value: .string(issue.message)),
                            ])
                        })))
        }
        return .object([JSONMember(key: "error", value: .object(members))])
    }

    public func response(from request: Request, context: some RequestContext) -> Response {
        var response = Response.json(jsonValue, status: status)
        response.headers.append(contentsOf: headers)
        return response
    }
}
