import HeraldDomain
import HTTPTypes
import Hummingbird
import Logging

/// The one place where failures become HTTP statuses: registry outcomes, validation,
/// access control, request syntax and Hummingbird's own errors.
extension APIError {
    /// Any error thrown while handling a request, as the error the client sees.
    static func from(_ error: any Error) -> APIError {
        switch error {
        case let error as APIError: return error
        case let error as RegistryError: return registry(error)
        case let error as ValidationFailure: return validation(error)
        case let error as JSONPatchError: return patch(error)
        case let error as EventIdConflict:
            let location = "/v1/notifications/\(error.eventId)"
            return APIError(
                status: .conflict, code: "duplicate_id_conflict",
                message:
                    "event id \"\(error.eventId)\" was already used by an event with other content (\(location)); publish this one under a new id",
                headers: [.location: location]
            )
        case let error as HTTPError: return http(error)
        case let error as any HTTPResponseError where error.status == .contentTooLarge:
            return requestTooLarge(limit: nil)
        case let error as any HTTPResponseError:
            return APIError(status: error.status, code: "http_\(error.status.code)", message: error.status.reasonPhrase)
        default:
            return APIError(status: .internalServerError, code: "internal", message: "the server failed to handle the request")
        }
    }

    static func registry(_ error: RegistryError) -> APIError {
        switch error.code {
        case .invalid:
            if error.issues.isEmpty { return APIError(status: .badRequest, code: "invalid", message: error.message) }
            return validation(ValidationFailure(issues: error.issues))
        case .notFound:
            return APIError(status: .notFound, code: "not_found", message: error.message)
        case .gone:
            return APIError(status: .gone, code: "gone", message: error.message)
        case .preconditionFailed:
            var failure = preconditionFailed(error.message)
            // The current version lets the client re-read or retry without guessing.
            if let current = error.currentVersion { failure.headers[.eTag] = RequestReading.entityTag(current) }
            return failure
        case .conflict:
            return APIError(status: .conflict, code: "conflict", message: error.message, headers: [.retryAfter: "1"])
        case .timeout:
            return APIError(
                status: .gatewayTimeout, code: "timeout",
                message: "\(error.message) (the write may still be applied; re-read before retrying)", headers: [.retryAfter: "1"]
            )
        default:
            return APIError(status: .serviceUnavailable, code: "unavailable", message: error.message, headers: [.retryAfter: "1"])
        }
    }

    /// A refused document: 400 naming the first field, with every issue listed.
    static func validation(_ failure: ValidationFailure) -> APIError {
        let first = failure.issues.first
        let message: String
        if let first, failure.issues.count == 1 {
            message = first.field.isEmpty ? first.message : "\(first.field): \(first.message)"
        } else {
            message = "\(failure.issues.count) problems, the first: \(first.map(\.description) ?? "")"
        }
        let status: HTTPResponse.Status =
            failure.issues.contains { $0.code == ValidationIssue.Code.tooLarge && $0.field.isEmpty }
            ? .contentTooLarge : .badRequest
        return APIError(status: status, code: "validation_failed", message: message, field: first?.field, issues: failure.issues)
    }

    /// A refused document with one issue at `field`.
    static func invalidBody(field: String, _ message: String) -> APIError {
        validation(ValidationFailure(issues: [ValidationIssue(field: field, code: ValidationIssue.Code.invalidValue, message: message)]))
    }

    static func patch(_ error: JSONPatchError) -> APIError {
        APIError(status: .badRequest, code: error.code, message: error.message, field: error.field)
    }

    static func http(_ error: HTTPError) -> APIError {
        switch error.status {
        case .notFound:
            return APIError(status: .notFound, code: "route_not_found", message: "no route matches this method and path; see /openapi.yaml")
        case .contentTooLarge:
            return requestTooLarge(limit: nil)
        default:
            return APIError(status: error.status, code: "http_\(error.status.code)", message: error.body ?? error.status.reasonPhrase)
        }
    }

    // MARK: Request syntax

    static func requestTooLarge(limit: Int?) -> APIError {
        APIError(
            status: .contentTooLarge, code: "request_too_large",
            message: limit.map { "the request body is larger than \($0) bytes" } ?? "the request body is too large"
        )
    }

    static func malformedJSON(_ error: JSONSyntaxError, what: String) -> APIError {
        APIError(
            status: .badRequest, code: ValidationIssue.Code.malformedJSON,
            message: "\(what) is not valid JSON: \(error.description)",
            issues: [ValidationIssue(field: "", code: ValidationIssue.Code.malformedJSON, message: error.description)]
        )
    }

    static func invalidParameter(_ name: String, _ message: String) -> APIError {
        APIError(status: .badRequest, code: "invalid_parameter", message: message, field: name)
    }

    static func preconditionFailed(_ message: String) -> APIError {
        APIError(status: .preconditionFailed, code: "precondition_failed", message: message, field: "If-Match")
    }

    static func conflict(_ code: String, _ message: String) -> APIError {
        APIError(status: .conflict, code: code, message: message)
    }

    static func notFound(_ what: String) -> APIError {
        APIError(status: .notFound, code: "not_found", message: "\(what) does not exist")
    }

    static func gone(_ message: String) -> APIError {
        APIError(status: .gone, code: "gone", message: message)
    }

    /// 503 `unavailable`: a store or the event log did not answer; the client may retry after
    /// `retryAfter` seconds.
    public static func unavailable(_ message: String, retryAfter seconds: Int = 1) -> APIError {
        APIError(status: .serviceUnavailable, code: "unavailable", message: message, headers: [.retryAfter: String(seconds)])
    }

    // MARK: Access control

    /// 401 with the challenges a client can answer.
    static func unauthenticated(_ code: String, _ message: String) -> APIError {
        var headers = HTTPFields()
        headers.append(HTTPField(name: .wwwAuthenticate, value: "SharedAccessSignature realm=\"herald\""))
        headers.append(HTTPField(name: .wwwAuthenticate, value: "Bearer realm=\"herald\""))
        return APIError(status: .unauthorized, code: code, message: message, headers: headers)
    }

    static func forbidden(_ code: String, _ message: String, field: String? = nil) -> APIError {
        APIError(status: .forbidden, code: code, message: message, field: field)
    }
}

/// Turns whatever a route throws into the JSON error document (or, with `render`, another
/// form of it: the Azure routes' XML), so no client ever sees a plain-text or empty error body.
/// Server faults are logged; client errors are not.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    var render: @Sendable (APIError, Request, Context) -> Response = { error, request, context in
        error.response(from: request, context: context)
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            let apiError = APIError.from(error)
            if apiError.status.code >= 500 {
                context.logger.error("request failed", metadata: ["error": "\(String(reflecting: error))", "path": "\(request.uri.path)"])
            }
            return render(apiError, request, context)
        }
    }
}
