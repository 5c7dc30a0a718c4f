/// How fast an event reached its audience, from its publish time (else the time it was
/// accepted): when its deliveries were committed to `herald.deliveries`, and when the push
/// services accepted them (receipts `sent`). The status's `reach` member.
public struct Reach: Sendable, Hashable, Codable {
    /// Deliveries committed: each fan-out task's deliveries at the time it committed them.
    public var committed: ReachCurve?
    /// Receipts `sent`, in 100 ms steps for the first 10 s and 1 s steps after.
    public var sent: ReachCurve?

    public init(committed: ReachCurve? = nil, sent: ReachCurve? = nil) {
        self.committed = committed
        self.sent = sent
    }

    /// The field of a `sent` receipt decided `elapsedMs` after the event's publish time, in the
    /// sender's per-event counts: `sent@<step start, ms>`.
    public static func sentField(elapsedMs: Int64) -> String {
        let elapsed = max(0, elapsedMs)
        let step: Int64 = elapsed < 10_000 ? 100 : 1_000
        return sentPrefix + String(elapsed / step * step)
    }

    /// The `sent@<ms>` counts among the sender's per-event fields, as (elapsed ms, count).
    public static func sentPoints(fields: [String: Int]) -> [(elapsedMs: Int64, count: Int)] {
        fields.compactMap { field, count in
            guard field.hasPrefix(sentPrefix), let elapsed = Int64(field.dropFirst(sentPrefix.count)) else { return nil }
            return (elapsed, count)
        }
    }

    static let sentPrefix = "sent@"
}

/// The times, in milliseconds from the publish, at which the first delivery and half, 90 %,
/// 99 % and all of the event's deliveries (`targets.total`) had reached a stage. A fraction
/// not reached (yet) is absent: deliveries that failed never reach `sent`.
public struct ReachCurve: Sendable, Hashable, Codable {
    /// Deliveries that reached the stage.
    public var count: Int
    public var firstMs: Int64?
    public var p50Ms: Int64?
    public var p90Ms: Int64?
    public var p99Ms: Int64?
    /// All of `targets.total`.
    public var allMs: Int64?

    public init(count: Int, firstMs: Int64? = nil, p50Ms: Int64? = nil, p90Ms: Int64? = nil, p99Ms: Int64? = nil, allMs: Int64? = nil) {
        self.count = count
        self.firstMs = firstMs
        self.p50Ms = p50Ms
        self.p90Ms = p90Ms
        self.p99Ms = p99Ms
        self.allMs = allMs
    }

    /// The latest of the times known.
    public var latestMs: Int64? {
        if let allMs { return allMs }
        if let p99Ms { return p99Ms }
        if let p90Ms { return p90Ms }
        if let p50Ms { return p50Ms }
        return firstMs
    }

    /// The times, each with the share it marks: `first`, `50%`, `90%`, `99%`, `all`.
    public var marks: [(mark: String, ms: Int64?)] {
        [("first", firstMs), ("50%", p50Ms), ("90%", p90Ms), ("99%", p99Ms), ("all", allMs)]
    }

    /// The curve of `points` (deliveries reaching the stage, by milliseconds from the publish)
    /// against `total` deliveries; nil when nothing reached it or there is no total.
    public init?(points: [(elapsedMs: Int64, count: Int)], total: Int) {
        let sorted = points.filter { $0.count > 0 }.sorted { $0.elapsedMs < $1.elapsedMs }
        guard total > 0, let first = sorted.first else { return nil }
        self.init(count: sorted.reduce(0) { $0 + $1.count }, firstMs: max(0, first.elapsedMs))
        var reached = 0
        for point in sorted {
            reached += point.count
            let at = max(0, point.elapsedMs)
            // The smallest time by which at least that share of all the deliveries had arrived.
            if p50Ms == nil, reached * 2 >= total { p50Ms = at }
            if p90Ms == nil, reached * 10 >= total * 9 { p90Ms = at }
            if p99Ms == nil, reached * 100 >= total * 99 { p99Ms = at }
            if allMs == nil, reached >= total { allMs = at }
        }
    }
}
