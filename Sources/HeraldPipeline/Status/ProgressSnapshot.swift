import Foundation
import HeraldDomain
import HeraldRedis

/// The per-event aggregation hash as `StatusScripts.recordProgress` returned it.
struct ProgressSnapshot: Sendable, Hashable {
    var done = 0
    /// Index of the task that completed the event, once all tasks are done.
    var completedBy: Int?
    var targets = DeliveryCounts()
    var skipped = 0
    var failed = 0
    var firstDeliveryAt: Date?
    var finishedAt: Date?
    /// Slots by fan-out plan (`s:<plan>` fields).
    var plans: [String: Int] = [:]
    /// Tasks the event's stop cut short or skipped.
    var stopped = 0
    /// Skipped registrations by reason (`r:<reason>` fields).
    var skippedReasons: [String: Int] = [:]
    /// Deliveries committed, by the time (epoch ms) their task finished (`c:<ms>` fields).
    var commits: [Int64: Int] = [:]

    init() {}

    init(reply: RedisValue) throws {
        guard let pairs = reply.fieldValuePairs else {
            throw RedisError(code: .unexpectedReply, message: "progress script replied \(reply), expected a field/value array")
        }
        for (field, value) in pairs {
            let number = value.int ?? 0
            switch field {
            case "done": done = number
            case "completedBy": completedBy = number
            case "n:total": targets.total = number
            case "n:skipped": skipped = number
            case "n:failed": failed = number
            case "n:stopped": stopped = number
            case "firstDeliveryAt": firstDeliveryAt = ISO8601Timestamp.date(milliseconds: Int64(number))
            case "finishedAt": finishedAt = ISO8601Timestamp.date(milliseconds: Int64(number))
            default:
                if field.hasPrefix("p:") {
                    targets.byPlatform[String(field.dropFirst(2))] = number
                } else if field.hasPrefix("t:") {
                    targets.byTemplate[String(field.dropFirst(2))] = number
                } else if field.hasPrefix("s:") {
                    plans[String(field.dropFirst(2))] = number
                } else if field.hasPrefix("r:") {
                    skippedReasons[String(field.dropFirst(2))] = number
                } else if field.hasPrefix("c:"), let at = Int64(field.dropFirst(2)) {
                    commits[at] = number
                }
            }
        }
    }

    /// The script arguments that add `progress` (after index, count and TTL).
    static func arguments(for progress: TaskProgress, ttlSeconds: Int) -> [String] {
        var arguments = [
            String(progress.taskIndex), String(progress.taskCount), String(ttlSeconds),
            String(ISO8601Timestamp.milliseconds(progress.finishedAt)),
            progress.firstDeliveryAt.map { String(ISO8601Timestamp.milliseconds($0)) } ?? "",
            "n:total", String(progress.delivered.total),
            "n:skipped", String(progress.skipped),
            "n:failed", String(progress.failed),
            "n:stopped", progress.stopped ? "1" : "0",
        ]
        for (platform, count) in progress.delivered.byPlatform.sorted(by: { $0.key < $1.key }) {
            arguments.append("p:" + platform)
            arguments.append(String(count))
        }
        for (template, count) in progress.delivered.byTemplate.sorted(by: { $0.key < $1.key }) {
            arguments.append("t:" + template)
            arguments.append(String(count))
        }
        for (plan, count) in progress.plans.sorted(by: { $0.key < $1.key }) {
            arguments.append("s:" + plan)
            arguments.append(String(count))
        }
        for (reason, count) in progress.skippedReasons.sorted(by: { $0.key < $1.key }) {
            arguments.append("r:" + reason)
            arguments.append(String(count))
        }
        if progress.delivered.total > 0 {
            arguments.append("c:" + String(ISO8601Timestamp.milliseconds(progress.finishedAt)))
            arguments.append(String(progress.delivered.total))
        }
        return arguments
    }

    /// The event's status as of this snapshot.
    func statusRecord(eventId: String, hub: HubName, taskCount: Int, publishedAt: Date?, acceptedAt: Date) -> StatusRecord {
        let complete = done >= taskCount
        var record = StatusRecord(
            eventId: eventId, state: complete ? .completed : .processing,
            tasks: StatusRecord.Tasks(planned: taskCount, completed: min(done, taskCount)),
            targets: targets, skipped: skipped, failed: failed,
            timings: StatusRecord.Timings(publishedAt: publishedAt, acceptedAt: acceptedAt, firstDeliveryAt: firstDeliveryAt),
            hub: hub
        )
        if !plans.isEmpty { record.plans = plans }
        if !skippedReasons.isEmpty { record.skippedReasons = skippedReasons }
        if complete, stopped > 0 {
            record.state = .cancelled
            record.reason = StatusRecord.stoppedReason(tasks: stopped, of: taskCount)
        }
        if complete, let finishedAt {
            record.timings.completedAt = finishedAt
            let start = publishedAt ?? acceptedAt
            record.timings.durationMs = ISO8601Timestamp.milliseconds(finishedAt) - ISO8601Timestamp.milliseconds(start)
            let startMs = ISO8601Timestamp.milliseconds(start)
            if let committed = ReachCurve(points: commits.map { ($0.key - startMs, $0.value) }, total: targets.total) {
                record.reach = Reach(committed: committed)
            }
        }
        return record
    }
}
