/// The pipeline roles a `herald worker` process can run. (The indexer role lives in
/// HeraldRegistry; the app composes it next to these.)
public enum WorkerRole: String, Sendable, Hashable, CaseIterable {
    case planner
    case fanout
}
