import Foundation
import HeraldDomain
import HeraldRedis
import HeraldRegistry

/// The state of one task while it runs: the event's renditions (one per distinct template
/// and platform met so far) and the counts that become its `TaskProgress`.
struct TaskRun {
    enum Outcome {
        case deliver(DeliveryRendition)
        /// In the audience, nothing to receive (no native payload, template not selected).
        case skip(String)
        /// In the audience, but the delivery cannot be built (template missing or broken).
        case fail(String)
    }

    struct Entry {
        var platform: [UInt8]
        var templateKey: [UInt8]
        var outcome: Outcome
        var delivered = 0

        func matches(platform: UnsafeRawBufferPointer, templateKey: UnsafeRawBufferPointer) -> Bool {
            Self.equal(self.templateKey, templateKey) && Self.equal(self.platform, platform)
        }

        private static func equal(_ stored: [UInt8], _ bytes: UnsafeRawBufferPointer) -> Bool {
            guard stored.count == bytes.count else { return false }
            guard let base = bytes.baseAddress, !stored.isEmpty else { return true }
            return stored.withUnsafeBytes { memcmp($0.baseAddress!, base, stored.count) == 0 }
        }
    }

    let task: FanoutTask
    /// nil for a broadcast.
    let plan: TagSetPlan?
    /// Slots by the plan that read them.
    var plans: [String: Int] = [:]
    let properties: TemplateProperties
    var renditions: [Entry] = []
    /// The entry the previous device used, tried first: one comparison, and the scan is saved
    /// whenever consecutive devices share a template and platform (most of an audience when
    /// one language dominates it).
    private var lastMatch = 0
    var skipped: [String: Int] = [:]
    var failed = 0
    var firstDeliveryAt: Date?

    /// The rendered body's bound per platform; a rendition past it is skipped, not emitted.
    let payloadLimits: PayloadLimits

    init(task: FanoutTask, configuration: PipelineConfiguration) {
        self.task = task
        self.payloadLimits = configuration.payloadLimits
        self.plan = task.event.audience.expression?.setPlan()
        self.properties = TemplateProperties(task.event.properties)
    }

    mutating func skip(_ reason: String) {
        skipped[reason, default: 0] += 1
    }

    /// The index in `renditions` for this view's (platform, template), rendering on first use.
    /// Called once per device: byte comparisons only, the last match tried first.
    mutating func rendition(
        for view: UnsafeRawBufferPointer, fields: ViewFields, templates: TemplateCache, redis: RedisConnection, now: Date
    ) throws -> Int {
        let platformBytes = UnsafeRawBufferPointer(rebasing: view[fields.platform])
        let keyBytes = UnsafeRawBufferPointer(rebasing: view[fields.templateKey])
        if lastMatch < renditions.count, renditions[lastMatch].matches(platform: platformBytes, templateKey: keyBytes) {
            return lastMatch
        }
        for index in renditions.indices where renditions[index].matches(platform: platformBytes, templateKey: keyBytes) {
            lastMatch = index
            return index
        }
        let outcome = try makeRendition(
            platform: String(decoding: platformBytes, as: UTF8.self), templateKey: String(decoding: keyBytes, as: UTF8.self),
            templates: templates, redis: redis, now: now
        )
        renditions.append(Entry(platform: Array(platformBytes), templateKey: Array(keyBytes), outcome: outcome))
        lastMatch = renditions.count - 1
        return lastMatch
    }

    private func makeRendition(platform name: String, templateKey: String, templates: TemplateCache, redis: RedisConnection, now: Date)
        throws -> Outcome
    {
        let event = task.event
        guard let platform = Platform(rawValue: name) else { return .fail("unknown platform \(name)") }
        // Live Activity and push-to-start tokens receive only what an event's liveActivity
        // says, and everything else skips them; device registrations skip Live Activity events.
        if let kind = APNsTokenKind(deliveryTemplateName: templateKey) {
            guard let update = event.liveActivity else { return .skip("not_a_live_activity_event") }
            guard update.tokenKind == kind else { return .skip(kind == .pushToStart ? "not_a_start" : "not_an_update") }
            let payload = update.payload(timestamp: event.publishedAt ?? now)
            guard payload.count <= payloadLimits.apns else { return .skip(Self.payloadTooLarge) }
            let headers = DeliveryHeaders.forDelivery(
                platform: .apns, event: event, templateHeaders: ["apns-push-type": "liveactivity"], bodyFormat: .json, now: now)
            return .deliver(
                DeliveryRendition(
                    hub: event.hub, eventId: task.eventId, platform: .apns, templateName: kind.deliveryTemplateName ?? templateKey,
                    payload: payload, headers: headers, expiresAt: event.expiresAt, publishedAt: event.publishedAt))
        }
        if event.liveActivity != nil { return .skip("not_a_live_activity") }
        if templateKey.isEmpty {
            guard let native = event.native[platform] else { return .skip("no_native_payload") }
            guard native.utf8.count <= payloadLimits[platform] else { return .skip(Self.payloadTooLarge) }
            let format: TemplateFormat = native.utf8.first == UInt8(ascii: "<") ? .xml : .json
            let headers = DeliveryHeaders.forDelivery(platform: platform, event: event, templateHeaders: [:], bodyFormat: format, now: now)
            return .deliver(
                DeliveryRendition(
                    hub: event.hub, eventId: task.eventId, platform: platform, templateName: DeliveryRecord.nativeTemplateName,
                    payload: Array(native.utf8), headers: headers, expiresAt: event.expiresAt, publishedAt: event.publishedAt
                ))
        }
        switch try templates.template(key: templateKey, connection: redis) {
        case .unusable(let reason):
            return .fail(reason)
        case .template(let template):
            guard event.includesTemplate(named: template.name) else { return .skip("template_not_selected") }
            var payload: [UInt8] = []
            guard template.body.render(properties, into: &payload, limit: payloadLimits[platform]) else {
                return .skip(Self.payloadTooLarge)
            }
            var headerValues: [String: String] = [:]
            for header in template.headers {
                guard let value = header.value.render(properties, limit: Self.maxHeaderValueBytes) else {
                    return .skip(Self.headerTooLarge)
                }
                headerValues[header.name] = value
            }
            let headers = DeliveryHeaders.forDelivery(
                platform: platform, event: event, templateHeaders: headerValues, bodyFormat: template.body.format, now: now
            )
            // Values are escaped as they render; what is left to refuse is a block too large to send.
            guard HeaderFieldRules.problem(with: headers) == nil else { return .skip(Self.headerTooLarge) }
            return .deliver(
                DeliveryRendition(
                    hub: event.hub, eventId: task.eventId, platform: platform, templateName: template.name,
                    payload: payload, headers: headers, expiresAt: event.expiresAt, publishedAt: event.publishedAt
                ))
        }
    }

    /// Skip reasons of renditions refused for their size.
    static let payloadTooLarge = "payload_too_large"
    static let headerTooLarge = "header_too_large"
    /// A rendered header value's bound (the size a registration's header template may have).
    static let maxHeaderValueBytes = RegistrationLimits.default.maxHeaderValueBytes
}
