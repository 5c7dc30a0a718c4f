import HeraldDomain
import HeraldPipeline
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
        return bootstrapMetrics()
    }

    /// Bootstraps swift-log into `logFile` at `level`, and onto stderr only from `consoleLevel`
    /// up: a local run whose console tells a story of its own.
    public static func bootstrap(level: Logger.Level, logFile: FileLogHandler.Sink, consoleLevel: Logger.Level)
        -> PrometheusCollectorRegistry
    {
        LoggingSystem.bootstrap { label in
            var console = StreamLogHandler.standardError(label: label)
            console.logLevel = max(level, consoleLevel)
            return MultiplexLogHandler([FileLogHandler(label: label, sink: logFile, level: level), console])
        }
        return bootstrapMetrics()
    }

    private static func bootstrapMetrics() -> PrometheusCollectorRegistry {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        // Publish-to-delivery spans milliseconds (one-user events) to seconds (broadcasts), and
        // publish-to-sent to minutes (a reach objective such as "90 % within 120 s").
        factory.defaultDurationHistogramBuckets = [
            .milliseconds(1), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
            .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2_500),
            .seconds(5), .seconds(10), .seconds(30), .seconds(60), .seconds(120), .seconds(300),
        ]
        MetricsSystem.bootstrap(factory)
        return registry
    }
}

/// Creates the labelled pipeline metrics at zero when a worker starts, so dashboards and
/// alerts see a series ("0 dead letters") instead of no data until the first occurrence.
enum MetricFamilies {
    static func declare(_ metrics: PipelineMetrics) {
        for platform in Platform.allCases { _ = metrics.deliveries(platform.rawValue) }
        for outcome in ["planned", "duplicate", "expired", "dead_letter", "empty"] { _ = metrics.events(outcome) }
        for reason in ["malformed_json", "invalid_tag_expression", "empty_tags", "invalid_type", "too_large"] {
            _ = metrics.deadLetters(reason)
        }
        for reason in ["no_native_payload", "registration_expired", "registration_gone", "template_not_selected", "unreadable_view"] {
            _ = metrics.skipped(reason)
        }
        for platform in [Platform.apns, .fcm] {
            _ = metrics.pushRequests(platform.rawValue)
            for outcome in PushOutcome.allCases { _ = metrics.pushReceipts(platform.rawValue, outcome.rawValue) }
            for reason in ["connection", "timeout"] { _ = metrics.pushRetries(platform.rawValue, reason) }
        }
        for outcome in ["removed", "kept", "absent", "error"] { _ = metrics.unregisteredRemovals(outcome) }
    }
}
