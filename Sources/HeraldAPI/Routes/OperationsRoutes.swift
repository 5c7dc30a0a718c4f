import Foundation
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
        router.get("openapi.yaml") { [openAPI] _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/yaml; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: openAPI)))
        }
    }

    /// The checked-in `openapi.yaml`, a resource of this module; nil when the resource bundle
    /// was not installed next to the executable.
    static func openAPIDocument() -> [UInt8]? {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "yaml") else { return nil }
        return (try? Data(contentsOf: url)).map { [UInt8]($0) }
    }

    /// 200 only when every dependency answers; 503 otherwise, so a load balancer stops
    /// sending registrations that could not be stored. Not being ready is an answer, not a
    /// fault of the server: it is returned, not thrown, so it is not logged as an error.
    @Sendable func ready(_ request: Request, context: APIRequestContext) async throws -> Response {
        for check in readinessChecks where await !check.isReady() {
            return APIError(
                status: .serviceUnavailable, code: "not_ready",
                message: "a dependency (Kafka or Redis) is not answering, or the registration index is being rebuilt",
                headers: [.retryAfter: "1"]
            ).response(from: request, context: context)
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
