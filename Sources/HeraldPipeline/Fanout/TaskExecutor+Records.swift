import Foundation
import HeraldDomain
import HeraldKafka
import HeraldRedis
import HeraldRegistry
import Logging

/// Writing a page of views as delivery records: skip or render each registration and queue its
/// record, every record of a page with the same clock.
extension TaskExecutor {
    /// The clock of one page: every record of a page carries the same `renderedAt`.
    struct PageClock {
        let now: Date
        let nowSeconds: Int64
        /// The records' Kafka timestamp (milliseconds since 1970).
        let nowMilliseconds: Int64
        var renderedAt: [UInt8] = []

        init() {
            now = Date()
            nowSeconds = Int64(now.timeIntervalSince1970)
            nowMilliseconds = Int64((now.timeIntervalSince1970 * 1_000).rounded(.down))
            ISO8601Timestamp.append(now, precision: .milliseconds, to: &renderedAt)
        }
    }

    /// Writes the records of every pack in `reply` (elements `first`, `first + step`, ...; nil
    /// elements are packs with no registration), read in place: of every registration, or of
    /// those `filter` selects.
    func write(
        packs reply: RedisReplyReference, first: Int, step: Int, key: String, slot: Int, filter: PackFilter? = nil,
        run: inout TaskRun,
        producer: KafkaProducer
    ) throws {
        try checkStop(&run, now: ContinuousClock.now)
        if run.stopped { return }
        let clock = PageClock()
        var delivered = 0
        var index = first
        let count = reply.count
        if run.prefetchesTemplates { try prefetchTemplates(packs: reply, first: first, step: step, run: &run) }
        // Unpacked once per reply, not per registration.
        let matcher: TagMatcher?
        let words: [UInt64]?
        switch filter {
        case nil: (matcher, words) = (nil, nil)
        case .tags(let tags): (matcher, words) = (tags, nil)
        case .positions(let selected, let tags): (matcher, words) = (tags, selected)
        }
        while index < count {
            if let pack = reply[index].bytes {
                let whole = try ViewPack.forEachEntry(in: pack) { position, id, view in
                    if let words {
                        let word = position >> 6
                        guard word < words.count, words[word] & (1 << UInt64(63 - position & 63)) != 0 else { return }
                    }
                    let place = (slot: slot, position: position)
                    if try write(id: id, view: view, at: place, filter: matcher, clock: clock, run: &run, producer: producer) {
                        delivered += 1
                    }
                }
                if !whole {
                    run.skip("unreadable_view")
                    logger.error(
                        "malformed view pack: its registrations after the last whole entry were skipped",
                        metadata: ["key": "\(key)"]
                    )
                }
            }
            index += step
        }
        finishPage(delivered: delivered, clock: clock, run: &run)
    }

    /// Fetches the templates of the page's registrations that neither this task nor this
    /// process has, in one pipeline (`TemplateCache.prefetch`); the next pages are looked at
    /// only while a page brings new ones.
    func prefetchTemplates(packs reply: RedisReplyReference, first: Int, step: Int, run: inout TaskRun) throws {
        var keys: Set<String> = []
        var index = first
        while index < reply.count {
            if let pack = reply[index].bytes {
                _ = try ViewPack.forEachEntry(in: pack) { _, _, view in
                    // Live Activity tokens name `$liveActivity` or `$pushToStart` in the key's place.
                    guard let fields = ViewFields(view), !fields.templateKey.isEmpty,
                        view[fields.templateKey.lowerBound] != UInt8(ascii: "$")
                    else { return }
                    let platform = UnsafeRawBufferPointer(rebasing: view[fields.platform])
                    let key = UnsafeRawBufferPointer(rebasing: view[fields.templateKey])
                    if run.existing(platform: platform, templateKey: key) == nil { keys.insert(String(decoding: key, as: UTF8.self)) }
                }
            }
            index += step
        }
        run.prefetchesTemplates = try templates.prefetch(Array(keys), connection: redis) > 0
    }

    /// One registration (at `place` in its slot): passes over it when `filter` does not select
    /// it, skips it with a reason, or renders (once per template and platform per task) and
    /// queues its record. Returns true when a record was queued.
    func write(
        id: UnsafeRawBufferPointer, view: UnsafeRawBufferPointer?, at place: (slot: Int, position: Int), filter: TagMatcher? = nil,
        clock: PageClock, run: inout TaskRun, producer: KafkaProducer
    ) throws -> Bool {
        guard let view else {
            // Removed between SSCAN and HMGET (or its pack is malformed).
            run.skip("registration_gone")
            return false
        }
        guard let fields = ViewFields(view) else {
            run.skip("unreadable_view")
            return false
        }
        // The scan plan: a registration outside the audience is passed over, not counted.
        if let filter, !filter.matches(tagList: UnsafeRawBufferPointer(rebasing: view[fields.tags])) { return false }
        if let expiry = fields.expiresAt(in: view), expiry <= clock.nowSeconds {
            run.skip("registration_expired")
            return false
        }
        // A release of alerts held for quiet hours: only the devices held until now.
        if run.quiet?.release != nil,
            run.quiet!.decide(tags: UnsafeRawBufferPointer(rebasing: view[fields.tags]), slot: place.slot) != .deliver
        {
            return false
        }
        let slot = try run.rendition(
            for: view, fields: fields, templates: templates, shared: &eventRenditions, redis: redis, now: clock.now)
        guard case .deliver(let rendition) = run.renditions[slot].outcome else {
            switch run.renditions[slot].outcome {
            case .skip(let reason): run.skip(reason)
            case .fail: run.failed += 1
            case .deliver: break
            }
            return false
        }
        if run.quiet != nil, run.quiet!.release == nil,
            case .skip(let reason) = run.quiet!.decide(tags: UnsafeRawBufferPointer(rebasing: view[fields.tags]), slot: place.slot)
        {
            run.skip(reason)
            return false
        }
        if run.alerts != nil {
            // Past a frequency cap: not pushed. Otherwise it counts for the next events.
            let own =
                run.alerts!.hasOwnCaps(slot: place.slot)
                ? AlertHistory.ownCap(in: UnsafeRawBufferPointer(rebasing: view[fields.tags])) : nil
            if run.alerts!.isCapped(slot: place.slot, position: place.position, own: own) {
                run.skip(FrequencyCap.skipReason)
                return false
            }
            if !run.task.rehearsal { run.alerts!.recordDelivery(slot: place.slot, position: place.position) }
        }
        run.renditions[slot].delivered += 1
        // A rehearsal counts what it would deliver and writes nothing.
        if run.task.rehearsal { return true }
        buffer.removeAll(keepingCapacity: true)
        let idBytes = id.assumingMemoryBound(to: UInt8.self)
        let handle = UnsafeRawBufferPointer(rebasing: view[fields.handle]).assumingMemoryBound(to: UInt8.self)
        rendition.write(registrationId: idBytes, handle: handle, renderedAt: clock.renderedAt, into: &buffer)
        guard let topic = deliveriesTopic else { preconditionFailure("write outside run") }
        try buffer.withUnsafeBytes { value in
            try producer.enqueue(
                to: topic, partition: transactionPartition, key: id, value: value, timestampMs: clock.nowMilliseconds
            )
        }
        return true
    }

    func finishPage(delivered: Int, clock: PageClock, run: inout TaskRun) {
        guard delivered > 0 else { return }
        if run.firstDeliveryAt == nil { run.firstDeliveryAt = clock.now }
        if !run.task.rehearsal, let publishedAt = run.task.event.publishedAt {
            metrics.publishToDelivery.recordNanoseconds(Int64(clock.now.timeIntervalSince(publishedAt) * 1e9))
        }
    }
}

/// One rendered payload on one platform within a task: the record frame every device receiving
/// it is written through (`DeliveryRecord.Frame`, built once), with the platform and template
/// name the task's counts are kept by.
final class DeliveryRendition: Sendable {
    let platform: Platform
    let templateName: String
    /// The rendered body (a rehearsal's preview).
    let payload: [UInt8]
    /// The properties its template reads that the event lacks (a rehearsal's preview says so).
    let missingProperties: [String]
    /// The properties read in place of missing ones through `|` chains (on every record too).
    let fallbacks: [String]
    private let frame: DeliveryRecord.Frame

    init(
        hub: HubName = .default, eventId: String, platform: Platform, templateName: String, payload: [UInt8],
        headers: DeliveryHeaders, expiresAt: Date?, publishedAt: Date?, test: Bool = false, correctionOf: String? = nil,
        missingProperties: [String] = [], fallbacks: [String] = []
    ) {
        self.missingProperties = missingProperties
        self.fallbacks = fallbacks
        self.platform = platform
        self.templateName = templateName
        self.payload = payload
        frame = DeliveryRecord.Frame(
            hub: hub, eventId: eventId, platform: platform, templateName: templateName, payload: payload, headers: headers,
            expiresAt: expiresAt, publishedAt: publishedAt, test: test, correctionOf: correctionOf, fallbacks: fallbacks)
    }

    /// Appends one record. `renderedAt` is the already formatted timestamp (the caller formats
    /// it once per page of recipients).
    @inline(__always)
    func write(registrationId: some Collection<UInt8>, handle: some Collection<UInt8>, renderedAt: [UInt8], into bytes: inout [UInt8]) {
        frame.write(registrationId: registrationId, handle: handle, renderedAt: renderedAt, into: &bytes)
    }
}
