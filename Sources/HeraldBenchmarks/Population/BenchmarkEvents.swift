import Foundation
import HeraldDomain

/// The events a benchmark publishes: localized breaking news with native payloads for both
/// platforms, so every registration in the audience receives exactly one delivery.
public enum BenchmarkEvents {
    public static let properties: [String: String] = [
        "News_English": "Breaking: world leaders reach agreement at the climate summit after overnight talks",
        "News_French": "Dernière minute : accord des dirigeants mondiaux au sommet sur le climat après une nuit de négociations",
        "News_Mandarin": "突发：世界各国领导人经过通宵谈判在气候峰会上达成协议",
    ]

    public static let native: [Platform: String] = [
        .apns: #"{"aps":{"alert":"Breaking: agreement at the climate summit","category":"NEWS_CATEGORY"}}"#,
        .fcm: #"{"message":{"notification":{"body":"Breaking: agreement at the climate summit"}}}"#,
    ]

    public static func broadcast(id: String) -> NotificationEvent {
        NotificationEvent(id: id, audience: .broadcast, properties: properties, native: native, priority: .high, collapseId: "summit")
    }

    public static func expression(id: String, source: String) throws -> NotificationEvent {
        let expression = try TagExpression.parse(source)
        return NotificationEvent(
            id: id, audience: .expression(expression, source: source), properties: properties, native: native,
            priority: .high, collapseId: "summit"
        )
    }

    /// A notify-user event for latency target `index` of the population.
    public static func targeted(id: String, latencyUser index: Int) -> NotificationEvent {
        let tag = SeedPopulation.latencyUserTag(index)
        return NotificationEvent(
            id: id, audience: .expression(.tag(tag), source: tag), properties: properties, native: native, priority: .high
        )
    }

    public static func warmup(id: String) -> NotificationEvent {
        let tag = SeedPopulation.warmupTag
        return NotificationEvent(id: id, audience: .expression(.tag(tag), source: tag), properties: properties, native: native)
    }
}
