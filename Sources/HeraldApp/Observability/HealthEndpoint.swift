import HeraldPipeline
import Hummingbird
import Logging
import Prometheus

/// The worker's small HTTP server: `/metrics`, `/health/live` and `/health/ready`.
///
/// Ready means Kafka and Redis answer and no loop of this process has been stalled (held input,
/// or waited for its group to assign partitions) longer than `stallLimits.ready`; live means
/// no loop has been stalled longer than `stallLimits.live`.
/// A 503 names the stalled loops, so whoever looks sees what is stuck.
public enum HealthEndpoint {
    /// - Parameter isReady: asked on every `/health/ready`; true when Kafka and Redis answer and the index is whole.
    public static func application(
        host: String, port: Int, registry: PrometheusCollectorRegistry,
        isReady: @escaping @Sendable () async -> Bool,
        stallLimits: (ready: Duration, live: Duration), progress: ProgressBoard,
        logger: Logger
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
        router.get("/health/live") { _, _ -> Response in
            let stalled = progress.stalled(longerThan: stallLimits.live)
            guard stalled.isEmpty else { return text(.serviceUnavailable, stalledReport(stalled, limit: stallLimits.live)) }
            return text(.ok, "live\n")
        }
        router.get("/health/ready") { _, _ -> Response in
            let stalled = progress.stalled(longerThan: stallLimits.ready)
            guard stalled.isEmpty else { return text(.serviceUnavailable, stalledReport(stalled, limit: stallLimits.ready)) }
            return await isReady()
                ? text(.ok, "ready\n")
                : text(.serviceUnavailable, "Kafka or Redis does not answer, or the registration index is being rebuilt\n")
        }
        return Application(
            router: router,
            configuration: .init(address: .hostname(host, port: port), serverName: "herald-worker"),
            logger: logger
        )
    }

    static func stalledReport(_ stalled: [(name: String, stall: Duration, reason: ProgressBoard.Reason)], limit: Duration) -> String {
        stalled.map { "\($0.name) \($0.reason) for \($0.stall.components.seconds) s (limit \(limit.components.seconds) s)\n" }
            .joined()
    }

    private static func text(_ status: HTTPResponse.Status, _ body: String) -> Response {
        Response(
            status: status, headers: [.contentType: "text/plain; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: body))
        )
    }
}
