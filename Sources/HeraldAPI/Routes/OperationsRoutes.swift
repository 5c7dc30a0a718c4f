import HTTPTypes
import HeraldDomain
import Hummingbird
import NIOCore
import Prometheus

/// Unauthenticated endpoints for orchestrators and scrapers: liveness, readiness,
/// Prometheus metrics and the OpenAPI document.
struct OperationsRoutes: Sendable {
    let readinessChecks: [any ReadinessChecking]
    let prometheus: PrometheusCollectorRegistry?
    let openAPI: [UInt8]

    func add(to router: Router<APIRequestContext>) {
        router.get("health/live") { _, _ in
            Response.json(.object([JSONMember(key: "status", value: .string("live"))]))
        }
        router.get("health/ready", use: ready)
        router.get("metrics", use: metrics)
        router.get("openapi.json") { [openAPI] _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: openAPI)))
        }
    }

    /// 200 only when every dependency answers; 503 otherwise, so a load balancer stops
    /// sending registrations that could not be stored.
    @Sendable func ready(_ request: Request, context: APIRequestContext) async throws -> Response {
        for check in readinessChecks where await !check.isReady() {
            throw APIError(
                status: .serviceUnavailable, code: "not_ready",
                message: "a dependency (Kafka or Redis) is not answering, or the registration index is being rebuilt",
                headers: [.retryAfter: "1"]
            )
        }
        return .json(.object([JSONMember(key: "status", value: .string("ready"))]))
    }

    @Sendable func metrics(_ request: Request, context: APIRequestContext) async throws -> Response {
        var bytes: [UInt8] = []
        prometheus?.emit(into: &bytes)
        return Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes))
        )
    }
}
