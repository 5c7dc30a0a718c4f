/// What the roles of one worker process share, created once per process (`runWorker`,
/// `herald worker`, a test's harness) and given to each role, instead of process-wide
/// singletons: two workers in one process (tests, the bench) never share them by accident.
public struct WorkerContext: Sendable {
    /// Bulk lanes step aside while express work (an express lane's, or the planner's own
    /// delivery of a narrow event) is in flight.
    public let express: ExpressGate
    /// Transactions that write the same partitions pass one at a time (`TransactionGate`).
    public let transactions: TransactionGate
    /// Whether each loop keeps up; the health endpoint reads it.
    public let progress: ProgressBoard
    /// Task partitions this process's planner has just committed to, for its bulk lanes.
    public let notices: TaskNotices
    /// The worker's metrics, which every role counts in.
    public let metrics: PipelineMetrics

    public init(metrics: PipelineMetrics = PipelineMetrics()) {
        express = ExpressGate()
        transactions = TransactionGate()
        progress = ProgressBoard()
        notices = TaskNotices()
        self.metrics = metrics
    }
}
