/// What one cluster client knows of the cluster's shape, and the rules for changing it: a value
/// the router keeps under its lock and asks what to do, tested without servers.
///
/// - The slot map is read from `CLUSTER SLOTS` on first use, and again when a command finds a
///   master unreachable or a slot without a master. One read at a time: callers that want one
///   while another runs wait for it and use its map, and a caller whose map is already older
///   than the current one uses the current one instead of reading again.
/// - A `MOVED` reply patches the map in place.
/// - Health: `healthy` when the last read covered every slot and every master answered since,
///   `degraded` (with the reason) when a master was unreachable, a read failed or a slot has no
///   master, `refreshing` while a read runs. Each change is reported once (`HealthChange`), so
///   the log says when a client lost and regained the whole cluster.
struct RedisClusterTopology: Sendable {
    enum Health: Equatable, Sendable, CustomStringConvertible {
        case unknown
        case healthy
        case degraded(reason: String)
        case refreshing

        var description: String {
            switch self {
            case .unknown: "unknown"
            case .healthy: "healthy"
            case .degraded(let reason): "degraded (\(reason))"
            case .refreshing: "refreshing"
            }
        }
    }

    /// The map in use, nil before the first read.
    private(set) var map: RedisClusterSlotMap?
    /// Counts the maps read: a caller remembers the generation it planned with.
    private(set) var generation = 0
    private(set) var health: Health = .unknown
    private var isReading = false
    /// Health before the read now running, restored if the read changes nothing.
    private var healthBeforeRead: Health = .unknown

    /// What a caller that wants a newer map does.
    enum RefreshAction: Equatable {
        /// Read `CLUSTER SLOTS` now, then report `read(_:)` or `readFailed(_:)`.
        case read
        /// Another caller is reading: wait for it, then ask again.
        case wait
        /// A map newer than the caller's is here already: use it.
        case use(RedisClusterSlotMap)
    }

    /// A caller that planned with generation `seen` (nil: whatever it is, read it again) wants
    /// a newer map.
    mutating func refresh(seen: Int?) -> RefreshAction {
        if let map, let seen, generation > seen { return .use(map) }
        if isReading { return .wait }
        isReading = true
        healthBeforeRead = health
        health = .refreshing
        return .read
    }

    /// The map a caller needs now: the current one, or a read.
    mutating func current() -> RefreshAction {
        if let map { return .use(map) }
        return refresh(seen: nil)
    }

    /// The read `refresh` asked for succeeded.
    mutating func read(_ fresh: RedisClusterSlotMap) -> HealthChange? {
        isReading = false
        map = fresh
        generation += 1
        let uncovered = fresh.uncoveredSlotCount
        return change(to: uncovered == 0 ? .healthy : .degraded(reason: "\(uncovered) hash slots have no master"))
    }

    /// The read `refresh` asked for failed: the map stays as it was.
    mutating func readFailed(_ reason: String) -> HealthChange? {
        isReading = false
        return change(to: .degraded(reason: reason))
    }

    /// A `MOVED` reply: `slot` is served by `endpoint` now.
    mutating func moved(slot: Int, to endpoint: RedisClusterEndpoint) {
        map?.assign(slot: slot, to: endpoint)
    }

    /// A command could not reach a master, or found a slot without one.
    mutating func trouble(_ reason: String) -> HealthChange? {
        if isReading { return nil }
        return change(to: .degraded(reason: reason))
    }

    /// Health moved from one state to another (never reported for `refreshing`, which is brief
    /// and always followed by the read's outcome).
    struct HealthChange: Equatable {
        var from: Health
        var to: Health
    }

    private mutating func change(to next: Health) -> HealthChange? {
        let before = health == .refreshing ? healthBeforeRead : health
        health = next
        if case .degraded = before, case .degraded = next { return nil }
        return before == next ? nil : HealthChange(from: before, to: next)
    }
}
