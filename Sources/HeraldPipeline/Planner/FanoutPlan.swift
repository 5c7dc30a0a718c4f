import Foundation
import HeraldDomain

/// What the planner does with one valid, first-seen event.
public enum FanoutPlan: Sendable, Hashable {
    /// `expiresAt` has passed: no tasks, status `expired`.
    case expired
    /// Tasks to publish on `lane`; an empty list means the audience is certainly empty (the
    /// slot probe found no slot holding its tags) and the event completes at once.
    case tasks([FanoutTask], lane: TaskLane)

    public var tasks: [FanoutTask] {
        if case .tasks(let tasks, _) = self { return tasks }
        return []
    }
}

/// The pure part of the planner: turns a validated event (with its id and `publishedAt` set)
/// and, for narrow-able expressions, the slots that may hold recipients, into tasks.
public struct FanoutPlanner: Sendable {
    public struct Configuration: Sendable, Hashable {
        /// Slots of the deployment (`herald:meta` `slots`).
        public var slotCount: Int = 256
        /// Tasks per wide event, at least. About 2-4 x the partitions of `herald.tasks` keeps
        /// every fan-out lane busy while letting a faster lane take a second chunk.
        public var bulkTaskCount: Int = 24
        /// Registrations per task a wide event is aimed at: a bigger audience gets more tasks
        /// (up to one per slot), so each task's transaction stays about this size. Each task is
        /// one transaction, and its deliveries become readable only when it commits; measured
        /// on the embedded broker, a million-device broadcast in 16 transactions of 62,500
        /// deliveries was read back 7 s after its last commit, in 64 of 15,600 right away, and
        /// in 32 of 32,000 1.0-1.3 s after it but 0.5-1.9 s sooner overall than in 63 of 16,000 (four
        /// paired runs: every transaction costs the broker and the worker, docs/performance.md).
        public var deliveriesPerTask: Int = 32_000
        /// An expression's task count is rounded up to a multiple of this (a worker's bulk
        /// lanes), so lanes sharing the task partitions get as many of its tasks each.
        public var taskCountMultiple: Int = 2
        /// An event whose candidate slots number at most this is narrow: express lane, one
        /// task per run of adjacent candidate slots.
        public var narrowSlotLimit: Int = 8
        /// The probe issues one EXISTS per (slot, positive tag); above this many it is skipped
        /// and the event is planned as wide.
        public var maxProbeCommands: Int = 8_192

        public init() {}
    }

    public var configuration: Configuration

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// The tags to probe in every slot, or nil when probing cannot narrow this event
    /// (a broadcast, an expression that matches registrations without its tags, or too many
    /// tags to probe cheaply).
    public func tagsToProbe(_ event: NotificationEvent) -> [String]? {
        guard let expression = event.audience.expression, SlotCandidates.applies(to: expression) else { return nil }
        let tags = SlotCandidates.positiveTags(of: expression)
        guard !tags.isEmpty, tags.count * configuration.slotCount <= configuration.maxProbeCommands else { return nil }
        return tags
    }

    /// Tasks for a wide event whose audience is estimated at `audienceEstimate` registrations
    /// (nil: unknown): `bulkTaskCount`, more for a big audience, never more than the slots.
    /// An expression (`isExpression`) gets tasks of about `deliveriesPerTask`, the size of a
    /// broadcast's, however few: each task is a transaction a lane commits, so smaller tasks
    /// cost more per delivery. Their count is rounded up to `taskCountMultiple` so the lanes
    /// finish together, but no task aims at fewer than half of `deliveriesPerTask`.
    public func bulkTaskCount(audienceEstimate: Int?, isExpression: Bool = false) -> Int {
        let minimum = max(1, configuration.bulkTaskCount)
        guard let audienceEstimate, configuration.deliveriesPerTask > 0 else { return minimum }
        let wanted = (audienceEstimate + configuration.deliveriesPerTask - 1) / configuration.deliveriesPerTask
        guard isExpression else { return max(minimum, min(configuration.slotCount, wanted)) }
        let multiple = max(1, configuration.taskCountMultiple)
        let rounded = (max(1, wanted) + multiple - 1) / multiple * multiple
        let smallest = max(1, configuration.deliveriesPerTask / 2)
        let mostForSize = max(1, (audienceEstimate + smallest - 1) / smallest)
        return max(1, min(configuration.slotCount, max(wanted, min(rounded, mostForSize))))
    }

    /// Plans `event`. `candidateSlots` (ascending) comes from the probe when `tagsToProbe`
    /// returned tags, else nil (every slot is a candidate). `audienceEstimate` is an upper
    /// bound of the registrations a wide event can reach (the planner counts the slots'
    /// registrations), nil when unknown.
    public func plan(_ event: NotificationEvent, eventId: String, candidateSlots: [Int]?, audienceEstimate: Int? = nil, now: Date)
        -> FanoutPlan
    {
        if let expiresAt = event.expiresAt, expiresAt <= now { return .expired }
        // A direct send names its devices: one express task, which reads no slot.
        if event.direct != nil {
            return .tasks(
                [FanoutTask(eventId: eventId, taskIndex: 0, taskCount: 1, slots: 0..<1, event: event, plannedAt: now)], lane: .express)
        }
        let slotCount = configuration.slotCount
        if let candidateSlots, candidateSlots.count <= configuration.narrowSlotLimit {
            let runs = Self.runs(of: candidateSlots)
            let tasks = runs.enumerated().map { index, slots in
                FanoutTask(eventId: eventId, taskIndex: index, taskCount: runs.count, slots: slots, event: event, plannedAt: now)
            }
            return .tasks(tasks, lane: .express)
        }
        var ranges = SlotRange.split(
            slotCount: slotCount,
            into: bulkTaskCount(audienceEstimate: audienceEstimate, isExpression: event.audience.expression != nil))
        if let candidateSlots {
            // Chunks without a candidate slot would only answer "nobody here".
            ranges.removeAll { range in !Self.containsAny(candidateSlots, in: range) }
        }
        let tasks = ranges.enumerated().map { index, slots in
            FanoutTask(eventId: eventId, taskIndex: index, taskCount: ranges.count, slots: slots, event: event, plannedAt: now)
        }
        // A breaking event's tasks take the express lanes, which every worker's bulk lanes
        // step aside for (`ExpressGate`).
        return .tasks(tasks, lane: event.urgency == .breaking ? .express : .bulk)
    }

    /// The task topic partition of task `index` of `taskCount`, from the event's own `start`:
    /// the tasks are spread evenly over the partitions (2 of 8 go to `start` and `start + 4`;
    /// 12 of 8 give every other partition a second), so a consumer group that gives each member
    /// a contiguous block of partitions (the range assignor) hands them out evenly. Two tasks on
    /// adjacent partitions would mostly run one after the other on one lane.
    public static func partition(ofTask index: Int, taskCount: Int, start: Int32, partitions: Int32) -> Int32 {
        let count = Int(max(1, partitions))
        return Int32((Int(start) + index * count / max(1, taskCount)) % count)
    }

    /// Adjacent slots joined into ranges: [3, 4, 9] -> [3..<5, 9..<10].
    static func runs(of slots: [Int]) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        for slot in slots {
            if let last = ranges.last, last.upperBound == slot {
                ranges[ranges.count - 1] = last.lowerBound..<(slot + 1)
            } else {
                ranges.append(slot..<(slot + 1))
            }
        }
        return ranges
    }

    private static func containsAny(_ sorted: [Int], in range: Range<Int>) -> Bool {
        // Binary search for the first slot >= lowerBound.
        var low = 0
        var high = sorted.count
        while low < high {
            let mid = (low + high) / 2
            if sorted[mid] < range.lowerBound { low = mid + 1 } else { high = mid }
        }
        return low < sorted.count && sorted[low] < range.upperBound
    }
}

/// Splits the slot space `0..<slotCount` into contiguous ranges, one per fan-out task.
///
/// Ranges differ in size by at most one slot, so the tasks of a broadcast take about the
/// same time and the last task does not become the tail everybody waits for.
public enum SlotRange {
    /// `count` ranges (fewer when there are fewer slots), in slot order, covering every slot once.
    public static func split(slotCount: Int, into count: Int) -> [Range<Int>] {
        precondition(slotCount > 0, "slot count must be positive")
        let parts = max(1, min(count, slotCount))
        let base = slotCount / parts
        let extra = slotCount % parts
        var ranges: [Range<Int>] = []
        ranges.reserveCapacity(parts)
        var lower = 0
        for index in 0..<parts {
            let upper = lower + base + (index < extra ? 1 : 0)
            ranges.append(lower..<upper)
            lower = upper
        }
        return ranges
    }
}

/// Which task topic (and fan-out lane) carries a task.
public enum TaskLane: String, Sendable, Hashable, CaseIterable {
    /// `herald.tasks`: chunks of broadcasts and wide expressions.
    case bulk
    /// `herald.tasks.express`: small tasks of narrow events, and the tasks of `breaking`
    /// events, served by their own consumer so they never queue behind a broadcast.
    case express
}
