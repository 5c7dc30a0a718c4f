/// How many deliveries, in total and broken down by platform and by template name
/// (``DeliveryRecord/nativeTemplateName`` for native registrations).
public struct DeliveryCounts: Sendable, Hashable, Codable {
    public var total: Int
    public var byPlatform: [String: Int]
    public var byTemplate: [String: Int]

    public init(total: Int = 0, byPlatform: [String: Int] = [:], byTemplate: [String: Int] = [:]) {
        self.total = total
        self.byPlatform = byPlatform
        self.byTemplate = byTemplate
    }

    /// Counts one delivery.
    public mutating func add(platform: Platform, template: String) {
        total += 1
        byPlatform[platform.rawValue, default: 0] += 1
        byTemplate[template, default: 0] += 1
    }

    /// Adds `other`'s counts to these.
    public mutating func merge(_ other: DeliveryCounts) {
        total += other.total
        byPlatform.merge(other.byPlatform, uniquingKeysWith: +)
        byTemplate.merge(other.byTemplate, uniquingKeysWith: +)
    }
}
