import Foundation
import HeraldAPI
import HeraldDomain
import Synchronization

/// Keeps engagements as `herald.engagements` and the engagement counts would: each device and
/// action counted once.
final class InMemoryEngagements: EngagementRecording, Sendable {
    let recorded = Mutex<[Engagement]>([])
    private let counted = Mutex<(devices: Set<String>, fields: [String: [String: Int]])>(([], [:]))

    func record(_ engagement: Engagement, publishedAt: Date?) async throws -> Bool {
        recorded.withLock { $0.append(engagement) }
        return counted.withLock { state in
            let key = engagement.hub.recordKey(engagement.eventId)
            guard state.devices.insert("\(key)|\(engagement.action.rawValue)|\(engagement.device.id)").inserted else { return false }
            for field in EngagementFunnel.fields(of: engagement, publishedAt: publishedAt) {
                state.fields[key, default: [:]][field, default: 0] += 1
            }
            return true
        }
    }

    func counts(eventId: String, hub: HubName) async throws -> [String: Int] {
        counted.withLock { $0.fields[hub.recordKey(eventId)] ?? [:] }
    }
}
