/// Which task topic (and fan-out lane) carries a task.
public enum TaskLane: String, Sendable, Hashable, CaseIterable {
    /// `herald.tasks`: chunks of broadcasts and wide expressions.
    case bulk
    /// `herald.tasks.express`: small tasks of narrow events, served by their own consumer so
    /// they never queue behind a broadcast.
    case express
}
