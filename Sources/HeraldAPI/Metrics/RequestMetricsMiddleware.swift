import Dispatch
import Hummingbird
import CoreMetrics
import Metrics

/// Counts requests by route template, method and status
/// (`herald_http_requests_total`) and times them (`herald_http_request_duration_seconds`).
/// Routes are the templates (`/v1/registrations/{id}`), never raw paths, so ids do not
/// explode the label space.
struct RequestMetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    let factory: any MetricsFactory

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = DispatchTime.now().uptimeNanoseconds
        let response = try await next(request, context)
        let route = context.endpointPath ?? "unmatched"
        let method = request.method.rawValue
        Counter(
            label: "herald_http_requests_total",
            dimensions: [("route", route), ("method", method), ("status", String(response.status.code))],
            factory: factory
        ).increment()
        CoreMetrics.Timer(
            label: "herald_http_request_duration_seconds",
            dimensions: [("route", route), ("method", method)],
            preferredDisplayUnit: .seconds,
            factory: factory
        ).recordNanoseconds(DispatchTime.now().uptimeNanoseconds - start)
        return response
    }
}
