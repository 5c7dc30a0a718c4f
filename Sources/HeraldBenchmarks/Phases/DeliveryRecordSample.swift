import Foundation
import HeraldDomain

/// Real delivery records for a population, built the way the fan-out builds them (each
/// distinct template rendered once, platform headers from the event), encoded with
/// `DeliveryRecord.encode(into:)` into one flat buffer so a producer loop only copies.
struct DeliveryRecordSample: Sendable {
    /// All records back to back.
    let bytes: [UInt8]
    /// `bytes[ends[i-1]..<ends[i]]` is record `i`.
    let ends: [Int]
    /// Registration ids (the record keys).
    let keys: [[UInt8]]

    var count: Int { ends.count }
    var averageBytes: Double { Double(bytes.count) / Double(max(1, ends.count)) }

    func range(_ index: Int) -> Range<Int> { (index == 0 ? 0 : ends[index - 1])..<ends[index] }

    init(population: SeedPopulation, event: NotificationEvent, eventId: String, count: Int) throws {
        let now = Date()
        let properties = TemplateProperties(event.properties)
        var rendered: [String: String] = [:]
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count * 560)
        var ends: [Int] = []
        ends.reserveCapacity(count)
        var keys: [[UInt8]] = []
        keys.reserveCapacity(count)
        for index in 0..<count {
            let registration = population.registration(at: index)
            let payload: String
            var templateHeaders: [String: String] = [:]
            if let template = registration.template {
                let cacheKey = "\(registration.platform.rawValue)|\(template.body)"
                if let cached = rendered[cacheKey] {
                    payload = cached
                } else {
                    payload = try CompiledTemplate.compile(template.body, format: .json).render(properties)
                    rendered[cacheKey] = payload
                }
                templateHeaders = template.headers
            } else {
                payload = event.native[registration.platform] ?? "{}"
            }
            let record = DeliveryRecord(
                eventId: eventId, registrationId: registration.registrationId, platform: registration.platform,
                handle: registration.handle, template: registration.deliveryTemplateName, payload: payload,
                headers: DeliveryHeaders.forDelivery(
                    platform: registration.platform, event: event, templateHeaders: templateHeaders, bodyFormat: .json, now: now
                ),
                expiresAt: event.expiresAt, publishedAt: now, renderedAt: now
            )
            record.encode(into: &bytes)
            ends.append(bytes.count)
            keys.append(Array(registration.registrationId.utf8))
        }
        self.bytes = bytes
        self.ends = ends
        self.keys = keys
    }
}
