import Hummingbird
import Logging
import Prometheus

/// The worker's small HTTP server: `/metrics`, `/health/live` and `/health/ready`.
public enum HealthEndpoint {
    /// - Parameter isReady: asked on every `/health/ready`; true when Kafka and Redis answer.
    public static func application(
        host: String, port: Int, registry: PrometheusCollectorRegistry,
        isReady: @escaping @Sendable () async -> Bool, logger: Logger
    ) -> some ApplicationProtocol {
        let router = Router()
        router.get("/metrics") { _, _ -> Response in
            var buffer: [UInt8] = []
            registry.emit(into: &buffer)
            return Response(
                status: .ok,
                headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: buffer))
            )
        }
        router.get("/health/live") { _, _ in HTTPResponse.Status.ok }
        router.get("/health/ready") { _, _ -> HTTPResponse.Status in
            await isReady() ? .ok : .serviceUnavailable
        }
        return Application(
            router: router,
            configuration: .init(address: .hostname(host, port: port), serverName: "herald-worker"),
            logger: logger
        )
    }
}
