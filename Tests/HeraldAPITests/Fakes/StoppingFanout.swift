import HeraldAPI
import HeraldDomain
import Synchronization

/// Statuses and a fan-out that stops an event when asked: `requestStop` turns the event's
/// status `cancelled`, as the workers do once its tasks have reported (a completed one stays
/// completed: the sender cancels its unsent deliveries).
final class StoppingFanout: NotificationStatusReading, NotificationScheduling, Sendable {
    private let state = Mutex<(records: [String: StatusRecord], stops: [String])>(([:], []))
    /// The deployment's measured fan-out speed the rehearsal answer reads (nil: none yet).
    let throughput: Int?

    init(throughput: Int? = nil) { self.throughput = throughput }

    func measuredThroughput() async throws -> Int? { throughput }

    func set(_ record: StatusRecord) { state.withLock { $0.records[record.hub.recordKey(record.eventId)] = record } }
    var stops: [String] { state.withLock { $0.stops } }

    func status(eventId: String, hub: HubName) async throws -> StatusRecord? {
        state.withLock { $0.records[hub.recordKey(eventId)] }
    }

    func requestStop(eventId: String, hub: HubName) async throws {
        state.withLock {
            let key = hub.recordKey(eventId)
            $0.stops.append(key)
            guard var record = $0.records[key], record.state == .accepted || record.state == .processing else { return }
            record.state = .cancelled
            record.reason = StatusRecord.stoppedReason(tasks: record.tasks.planned - record.tasks.completed, of: record.tasks.planned)
            $0.records[key] = record
        }
    }

    func requestCancel(eventId: String, hub: HubName) async throws {}

    func pendingSchedules() async throws -> [ScheduledEvent] { [] }
}
