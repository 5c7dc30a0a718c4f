import Hummingbird
import Logging

/// Turns whatever a route throws into the JSON error document, so no client ever sees a
/// plain-text or empty error body. Server faults are logged; client errors are not.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            let apiError = APIError.from(error)
            if apiError.status.code >= 500 {
                context.logger.error("request failed", metadata: ["error": "\(String(reflecting: error))", "path": "\(request.uri.path)"])
            }
            return apiError.response(from: request, context: context)
        }
    }
}
