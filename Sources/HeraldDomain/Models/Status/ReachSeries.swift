/// An event's reach over time, for a chart: how many of its deliveries had been committed, sent
/// by the push services and opened by readers, by milliseconds from its publish. Each stage is
/// cumulative and ascending in time; the stores count it in steps (`c:<epoch ms>` per finished
/// task, `sent@<ms>` in 100 ms then 1 s steps, `opened@<ms>` in 10 ms steps).
public struct ReachSeries: Sendable, Hashable {
    /// A count reached `elapsedMs` after the publish (everything up to and including then).
    public struct Point: Sendable, Hashable {
        public var elapsedMs: Int64
        public var count: Int

        public init(elapsedMs: Int64, count: Int) {
            self.elapsedMs = elapsedMs
            self.count = count
        }
    }

    public var committed: [Point]
    public var sent: [Point]
    public var opened: [Point]

    public init(committed: [Point] = [], sent: [Point] = [], opened: [Point] = []) {
        self.committed = committed
        self.sent = sent
        self.opened = opened
    }

    /// The series of the stores' fields: the fan-out's progress (`c:<epoch ms>` -> deliveries
    /// committed then), the sender's counts (`sent@<ms>`) and the engagement counts
    /// (`opened@<ms>`); `startMs` is the publish time (else the acceptance) in milliseconds since
    /// 1970. Other fields are ignored; a time before the start counts at 0.
    public init(progress: [String: Int], push: [String: Int], engagements: [String: Int], startMs: Int64) {
        let commits = progress.compactMap { field, count -> (Int64, Int)? in
            guard field.hasPrefix("c:"), let at = Int64(field.dropFirst(2)) else { return nil }
            return (at - startMs, count)
        }
        self.init(
            committed: Self.cumulative(commits),
            sent: Self.cumulative(Self.elapsed(push, prefix: "sent@")),
            opened: Self.cumulative(Self.elapsed(engagements, prefix: "opened@")))
    }

    /// The counts of fields `<prefix><elapsed ms>`.
    static func elapsed(_ fields: [String: Int], prefix: String) -> [(Int64, Int)] {
        fields.compactMap { field, count in
            guard field.hasPrefix(prefix), let elapsed = Int64(field.dropFirst(prefix.count)) else { return nil }
            return (elapsed, count)
        }
    }

    /// Running totals of per-step counts, one point per distinct time (zero counts dropped).
    static func cumulative(_ steps: [(Int64, Int)]) -> [Point] {
        var points: [Point] = []
        var total = 0
        for (elapsed, count) in steps.filter({ $0.1 > 0 }).map({ (max(0, $0.0), $0.1) }).sorted(by: { $0.0 < $1.0 }) {
            total += count
            if let last = points.last, last.elapsedMs == elapsed {
                points[points.count - 1].count = total
            } else {
                points.append(Point(elapsedMs: elapsed, count: total))
            }
        }
        return points
    }
}
