import HeraldAPI
import HeraldDomain
import Synchronization

/// Keeps what would have gone to `herald.events`.
final class RecordingPublisher: NotificationPublishing, Sendable {
    let published = Mutex<[(event: NotificationEvent, body: [UInt8])]>([])

    var count: Int { published.withLock { $0.count } }
    var last: (event: NotificationEvent, body: [UInt8])? { published.withLock { $0.last } }

    /// Ids the fake answers with ``EventIdConflict``, as the real publisher does for an id
    /// claimed by other content.
    let conflicting = Mutex<Set<String>>([])

    func publish(_ event: NotificationEvent, body: [UInt8]) async throws -> String {
        if let id = event.id, event.testRecipients == nil, event.correction == nil, conflicting.withLock({ $0.contains(id) }) {
            throw EventIdConflict(eventId: id)
        }
        let offset = published.withLock {
            $0.append((event, body))
            return Int64($0.count - 1)
        }
        if event.correction != nil { return DerivedSend.correction.eventId(of: event.id!, partition: 0, offset: offset) }
        return event.testRecipients == nil ? event.id! : DerivedSend.test.eventId(of: event.id!, partition: 0, offset: offset)
    }

    /// Rehearsals are kept apart from what was published.
    let rehearsed = Mutex<[NotificationEvent]>([])

    func rehearse(_ event: NotificationEvent) async throws -> String {
        let offset = rehearsed.withLock {
            $0.append(event)
            return Int64($0.count - 1)
        }
        return DerivedSend.rehearsal.eventId(of: event.id!, partition: 0, offset: offset)
    }
}

/// Answers status queries from a fixed table.
struct FixedStatusReader: NotificationStatusReading {
    /// By record key: the event id, `<hub>/<id>` outside the default hub.
    var records: [String: StatusRecord] = [:]
    /// Thrown by every read when set, as a store that is down would.
    var failure: (any Error & Sendable)?

    /// By record key, as `records`: each event's reach over time.
    var series: [String: ReachSeries] = [:]
    /// By record key: statuses handed out in turn by each read (the last one stays), for an
    /// event followed live; `records` answers for keys not here.
    var sequences: [String: StatusSequence] = [:]

    func status(eventId: String, hub: HubName) async throws -> StatusRecord? {
        if let failure { throw failure }
        if let sequence = sequences[hub.recordKey(eventId)] { return sequence.next() }
        return records[hub.recordKey(eventId)]
    }

    /// The hub's records, newest publish first.
    func recent(hub: HubName, limit: Int) async throws -> [StatusRecord] {
        if let failure { throw failure }
        let start = { (record: StatusRecord) in record.timings.publishedAt ?? record.timings.acceptedAt }
        return Array(records.values.filter { $0.hub == hub && !$0.isRehearsal }.sorted { start($0) > start($1) }.prefix(limit))
    }

    func reachSeries(eventId: String, hub: HubName) async throws -> ReachSeries? {
        if let failure { throw failure }
        guard try await status(eventId: eventId, hub: hub) != nil else { return nil }
        return series[hub.recordKey(eventId)] ?? ReachSeries()
    }
}

/// Statuses read in turn: each read gets the next, the last one stays.
final class StatusSequence: Sendable {
    private let records: [StatusRecord]
    private let reads = Mutex(0)

    init(_ records: [StatusRecord]) { self.records = records }

    func next() -> StatusRecord? {
        reads.withLock { count in
            defer { count += 1 }
            return records.isEmpty ? nil : records[min(count, records.count - 1)]
        }
    }
}

/// Gives published events back from a fixed table (by record key), as the event log would.
struct FixedEventArchive: EventArchive {
    var events: [String: NotificationEvent] = [:]

    func event(eventId: String, hub: HubName) async throws -> NotificationEvent? { events[hub.recordKey(eventId)] }
}
