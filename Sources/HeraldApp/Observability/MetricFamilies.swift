import HeraldDomain
import HeraldPipeline

/// Creates the labelled pipeline metrics at zero when a worker starts, so dashboards and
/// alerts see a series ("0 dead letters") instead of no data until the first occurrence.
enum MetricFamilies {
    static func declare(_ metrics: PipelineMetrics = .shared) {
        for platform in Platform.allCases { _ = metrics.deliveries(platform.rawValue) }
        for outcome in ["planned", "duplicate", "expired", "dead_letter", "empty"] { _ = metrics.events(outcome) }
        for reason in ["malformed_json", "invalid_tag_expression", "empty_tags", "invalid_type", "too_large"] {
            _ = metrics.deadLetters(reason)
        }
        for reason in ["no_native_payload", "registration_expired", "registration_gone", "template_not_selected", "unreadable_view"] {
            _ = metrics.skipped(reason)
        }
    }
}
