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
        /// The previous entry with the same `TaskRun.hash` (-1: none).
        var sameHash = -1

        /// The entry of (platform, template key) in the chain of one hash starting at `head`.
        static func chain(
            in entries: [Entry], from head: Int?, platform: UnsafeRawBufferPointer, templateKey: UnsafeRawBufferPointer
        ) -> Int? {
            var index = head ?? -1
            while index >= 0 {
                if entries[index].matches(platform: platform, templateKey: templateKey) { return index }
                index = entries[index].sameHash
            }
            return nil
        }

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
    /// The entries by `Self.hash` of their (platform, template key), looked up past
    /// `scanLimit` entries: a scan costs a comparison per entry per device, which an audience
    /// spread over thousands of templates would pay thousands of times over.
    private var byHash: [UInt64: Int] = [:]
    /// `hub/eventId`: whose renditions `EventRenditions` holds.
    private let eventKey: String
    static let scanLimit = 8
    var skipped: [String: Int] = [:]
    var failed = 0
    /// The hub's recent alerts when it has frequency caps (`AlertHistory`).
    var alerts: AlertHistory?
    /// The quiet-hours check when devices of the task's slots have quiet hours (`QuietHoursCheck`).
    var quiet: QuietHoursCheck?
    var firstDeliveryAt: Date?

    /// The event was stopped (`TaskExecutor.checkStop`): the task writes no more deliveries.
    var stopped = false
    /// When `TaskExecutor.checkStop` next asks Redis.
    var nextStopCheck = ContinuousClock.now
    /// Whether the next page's templates are fetched ahead, in one pipeline
    /// (`TaskExecutor.prefetchTemplates`): on the first page, and while pages bring new ones.
    var prefetchesTemplates = true

    /// The rendered body's bound per platform (lowered to the hub's `maxPayloadBytes`); a
    /// rendition past it is skipped, not emitted.
    let payloadLimits: PayloadLimits

    init(task: FanoutTask, configuration: PipelineConfiguration) {
        self.task = task
        self.payloadLimits = configuration.payloadLimits.capped(at: task.maxPayloadBytes)
        self.plan = task.event.audience.expression?.setPlan()
        self.properties = TemplateProperties(task.event.properties)
        self.eventKey = task.event.hub.recordKey(task.eventId)
    }

    mutating func skip(_ reason: String) {
        skipped[reason, default: 0] += 1
    }

    /// The index in `renditions` for this view's (platform, template), taken from `shared` or
    /// rendered on first use. Called once per device: byte comparisons only, the last match
    /// tried first.
    mutating func rendition(
        for view: UnsafeRawBufferPointer, fields: ViewFields, templates: TemplateCache, shared: inout EventRenditions,
        redis: RedisConnection, now: Date
    ) throws -> Int {
        let platformBytes = UnsafeRawBufferPointer(rebasing: view[fields.platform])
        let keyBytes = UnsafeRawBufferPointer(rebasing: view[fields.templateKey])
        if let index = existing(platform: platformBytes, templateKey: keyBytes) {
            lastMatch = index
            return index
        }
        let hash = Self.hash(platformBytes, keyBytes)
        var entry: Entry
        if let known = shared.find(event: eventKey, hash: hash, platform: platformBytes, templateKey: keyBytes, now: now) {
            // The arrays are shared with the lane's entry, not copied.
            entry = known
        } else {
            let outcome = try makeRendition(
                platform: String(decoding: platformBytes, as: UTF8.self), templateKey: String(decoding: keyBytes, as: UTF8.self),
                templates: templates, redis: redis, now: now
            )
            entry = Entry(platform: Array(platformBytes), templateKey: Array(keyBytes), outcome: outcome)
            shared.store(entry, event: eventKey, hash: hash, now: now)
        }
        entry.delivered = 0
        entry.sameHash = byHash[hash] ?? -1
        lastMatch = renditions.count
        renditions.append(entry)
        byHash[hash] = lastMatch
        return lastMatch
    }

    /// The entry of (platform, template key) when this task has one.
    func existing(platform: UnsafeRawBufferPointer, templateKey: UnsafeRawBufferPointer) -> Int? {
        if lastMatch < renditions.count, renditions[lastMatch].matches(platform: platform, templateKey: templateKey) {
            return lastMatch
        }
        if renditions.count <= Self.scanLimit {
            return renditions.indices.first { renditions[$0].matches(platform: platform, templateKey: templateKey) }
        }
        return Entry.chain(in: renditions, from: byHash[Self.hash(platform, templateKey)], platform: platform, templateKey: templateKey)
    }

    /// FNV-1a over the platform, a separator and the template key.
    static func hash(_ platform: UnsafeRawBufferPointer, _ key: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in platform { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        hash = (hash ^ 0x7C) &* 0x0000_0100_0000_01B3
        for byte in key { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        return hash
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
                    payload: payload, headers: headers, expiresAt: event.expiresAt, publishedAt: event.publishedAt,
                    test: event.testRecipients != nil))
        }
        if event.liveActivity != nil { return .skip("not_a_live_activity") }
        if event.correction?.withdraw == true {
            return try withdrawal(platform: platform, templateKey: templateKey, templates: templates, redis: redis, now: now)
        }
        if templateKey.isEmpty {
            guard let native = event.native[platform] else { return .skip("no_native_payload") }
            guard native.utf8.count <= payloadLimits[platform] else { return .skip(Self.payloadTooLarge) }
            let format: TemplateFormat = native.utf8.first == UInt8(ascii: "<") ? .xml : .json
            let headers = DeliveryHeaders.forDelivery(platform: platform, event: event, templateHeaders: [:], bodyFormat: format, now: now)
            return .deliver(
                DeliveryRendition(
                    hub: event.hub, eventId: task.eventId, platform: platform, templateName: DeliveryRecord.nativeTemplateName,
                    payload: Array(native.utf8), headers: headers, expiresAt: event.expiresAt, publishedAt: event.publishedAt,
                    test: event.testRecipients != nil, correctionOf: correctionOf
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
            // An alert with every text missing would show an empty banner: not pushed.
            if EmptyAlert.check(platform: platform, payload: payload) { return .skip(EmptyAlert.reason) }
            var missing: [String] = []
            if task.rehearsal {
                missing = template.headers.reduce(template.body.missingProperties(properties)) {
                    $0.union($1.value.missingProperties(properties))
                }.sorted()
            }
            return .deliver(
                DeliveryRendition(
                    hub: event.hub, eventId: task.eventId, platform: platform, templateName: template.name,
                    payload: payload, headers: headers, expiresAt: event.expiresAt, publishedAt: event.publishedAt,
                    test: event.testRecipients != nil, correctionOf: correctionOf, missingProperties: missing,
                    fallbacks: template.headers.reduce(into: Set(template.body.alternativesUsed(properties))) {
                        $0.formUnion($1.value.alternativesUsed(properties))
                    }.sorted()
                ))
        }
    }

    /// The id of the event a correction's deliveries correct (nil for any other task).
    private var correctionOf: String? { task.event.correction != nil ? task.event.id : nil }

    /// A withdrawal (`correction.withdraw`): the platform's silent push naming the replace key
    /// the original carried, whatever the registration's template (whose name the record keeps).
    private func withdrawal(platform: Platform, templateKey: String, templates: TemplateCache, redis: RedisConnection, now: Date)
        throws -> Outcome
    {
        let event = task.event
        var templateName = DeliveryRecord.nativeTemplateName
        if !templateKey.isEmpty {
            switch try templates.template(key: templateKey, connection: redis) {
            case .unusable(let reason): return .fail(reason)
            case .template(let template): templateName = template.name
            }
        }
        let headers = DeliveryHeaders.forDelivery(
            platform: platform, event: event, templateHeaders: EventCorrection.withdrawalHeaders(platform: platform), bodyFormat: .json,
            now: now)
        let key = headers[DeliveryHeaders.replaceHeaderName(platform)] ?? event.replaceKey ?? task.eventId
        return .deliver(
            DeliveryRendition(
                hub: event.hub, eventId: task.eventId, platform: platform, templateName: templateName,
                payload: EventCorrection.withdrawalPayload(platform: platform, replaceKey: key), headers: headers,
                expiresAt: event.expiresAt, publishedAt: event.publishedAt, correctionOf: correctionOf))
    }

    /// Skip reasons of renditions refused for their size.
    static let payloadTooLarge = "payload_too_large"
    static let headerTooLarge = "header_too_large"
    /// A rendered header value's bound (the size a registration's header template may have).
    static let maxHeaderValueBytes = RegistrationLimits.default.maxHeaderValueBytes
}

/// The renditions of the event a lane ran last, for the lane's next tasks of it: without them,
/// an audience spread over thousands of templates has each one rendered again by every task.
/// Kept for `lifetime` after the first was made (a rendition's TTL headers count from when it
/// was made) and up to `capacity` of them; a task of another event starts afresh.
struct EventRenditions {
    static let lifetime: TimeInterval = 1
    static let capacity = 20_000
    private var event = ""
    private var madeAt = Date.distantPast
    private var entries: [TaskRun.Entry] = []
    /// The last entry of each `TaskRun.hash`, chained through `sameHash`.
    private var byHash: [UInt64: Int] = [:]

    func find(
        event: String, hash: UInt64, platform: UnsafeRawBufferPointer, templateKey: UnsafeRawBufferPointer, now: Date
    ) -> TaskRun.Entry? {
        guard event == self.event, now.timeIntervalSince(madeAt) < Self.lifetime else { return nil }
        return TaskRun.Entry.chain(in: entries, from: byHash[hash], platform: platform, templateKey: templateKey).map { entries[$0] }
    }

    mutating func store(_ entry: TaskRun.Entry, event: String, hash: UInt64, now: Date) {
        if event != self.event || now.timeIntervalSince(madeAt) >= Self.lifetime || entries.count >= Self.capacity {
            self.event = event
            madeAt = now
            entries.removeAll(keepingCapacity: true)
            byHash.removeAll(keepingCapacity: true)
        }
        var entry = entry
        entry.sameHash = byHash[hash] ?? -1
        byHash[hash] = entries.count
        entries.append(entry)
    }
}
