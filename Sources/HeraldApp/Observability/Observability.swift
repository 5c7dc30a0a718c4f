import Logging
import Metrics
import Prometheus

/// Process-wide logging and metrics. Each `herald` command that runs services calls
/// `bootstrap` once, before creating anything that logs or records metrics.
public enum Observability {
    /// Bootstraps swift-log (stderr, at `level`) and swift-metrics (Prometheus) and returns the
    /// registry that `/metrics` renders.
    public static func bootstrap(level: Logger.Level) -> PrometheusCollectorRegistry {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        // Publish-to-delivery spans milliseconds (one-user events) to seconds (broadcasts).
        factory.defaultDurationHistogramBuckets = [
            .milliseconds(1), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
            .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2_500),
            .seconds(5), .seconds(10), .seconds(30), .seconds(60),
        ]
        MetricsSystem.bootstrap(factory)
        return registry
    }
}
